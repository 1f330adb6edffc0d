# orphaned-field: after an apply, live keeps a field that is in neither the
# manifest nor last-applied and that a person set (kubectl edit, patch,
# set, rollout restart, or an undo); apply will never remove it.
package applyhygiene.rules.orphaned_field

import data.applyhygiene.lib

classifications := {"client-side-apply", "server-side-apply"}

decisions contains d if {
	input.classification in classifications
	a := lib.action("orphaned-field")
	some o in lib.analysis.orphans
	d := {"rule": "orphaned-field", "action": a, "message": message(o, a), "paths": [o.path]}
}

setter(o) := lib.owner_text(o.owners[0]) if {
	o.owners[0]
} else := "an unknown writer"

# fix(o, a) tells how the orphan goes away: pruned by apply-hygiene, or
# the command that removes it (guarded by a test of its value).
fix(o, a) := "apply-hygiene removes it in this request." if {
	a == "prune"
} else := sprintf("Remove it with: kubectl patch %s --type=json -p %s", [lib.target, lib.shell_quote(o.removePatch)]) if {
	o.removePatch != ""
} else := sprintf("Remove it with: kubectl edit %s", [lib.target])

message(o, a) := sprintf(
	"[orphaned-field] %s: %s (%s, set by %s) is in neither your manifest nor last-applied, so kubectl apply will never remove it. %s",
	[lib.describe, o.path, lib.show(o, "live"), setter(o), fix(o, a)],
)
