# Package applyhygiene is the decision document the engine queries:
# data.applyhygiene.decisions, a set of {rule, action, message, paths}.
#
# Every bundled rule lives in its own package under applyhygiene.rules and
# adds to its own decisions set; this module gathers them. User policies
# may do the same, or add to applyhygiene.decisions directly.
package applyhygiene

decisions contains d if {
	some d in data.applyhygiene.rules[_].decisions
}
