# imperative-edit: a write other than apply (kubectl edit, patch, set,
# label, annotate, scale, rollout restart) changes or removes fields that
# last-applied owns, so the next kubectl apply silently reverts it.
package applyhygiene.rules.imperative_edit

import data.applyhygiene.lib

# classifications are the writes by people that are not an apply.
classifications := {"imperative", "scale", "rollout-restart"}

changes := input.analysis.imperativeChanges

decisions contains lib.decision("imperative-edit", message, paths) if {
	input.classification in classifications
	# At least one change. Not count(paths): the partial evaluation at load
	# keeps a comprehension that reads the input unevaluated, so the rule
	# would never look silent on an empty analysis.
	changes[0]
}

paths := [c.path | some c in changes]

fields := lib.list([text |
	some c in changes
	text := sprintf("%s (last-applied %s, now %s)", [c.path, lib.show(c, "lastApplied"), lib.show_or(c, "result", "removed")])
])

# writer names the request: its user and field manager.
writer := sprintf("this write by %s (field manager %s)", [input.request.user.username, input.request.fieldManager]) if {
	input.request.fieldManager != ""
} else := sprintf("this write by %s", [input.request.user.username])

message := sprintf(
	"[imperative-edit] %s: %s changes fields that last-applied owns: %s; the next kubectl apply puts the last-applied values back without a word. Put the change in your manifest and run kubectl apply, or hand a field over to its new writer by deleting it from last-applied first with: kubectl apply edit-last-applied %s",
	[lib.describe, writer, fields, lib.target],
)
