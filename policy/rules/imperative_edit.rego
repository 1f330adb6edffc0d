# imperative-edit: a write other than apply (kubectl edit, patch, set,
# label, annotate, scale, rollout restart) changes or removes fields that
# last-applied owns, so the next kubectl apply silently reverts it, or
# fails when the API server refuses the revert (a claim's storage request,
# which it does not shrink). A server-side apply by a manager other than
# the one that owns last-applied that moves such a field away from it is
# warned about (never denied: it is an apply, and the next client-side
# apply that reverts it warns with apply-reverts-drift). So is, by default,
# a write by a deployment tool that applies with Update writes (Helm 3's
# upgrade and rollback: lib.deploy_tool, deployToolAction), on an object
# first applied with kubectl and later adopted by the tool.
package applyhygiene.rules.imperative_edit

import data.applyhygiene.lib

# classifications are the writes by people that are not an apply.
classifications := {"imperative", "scale", "rollout-restart"}

changes := input.analysis.imperativeChanges

decisions contains lib.fixed(lib.decision("imperative-edit", message, paths), lib.handover(paths)) if {
	input.classification in classifications
	# At least one change. Not count(paths): the partial evaluation at load
	# keeps a comprehension that reads the input unevaluated, so the rule
	# would never look silent on an empty analysis.
	changes[0]
}

# A server-side apply: the action in force, but at most a warning.
decisions contains object.union(d, {"action": at_most_warn(d.action)}) if {
	input.classification == "server-side-apply"
	changes[0]
	d := lib.decision("imperative-edit", server_side_message, paths)
}

at_most_warn(a) := "warn" if {
	a == "deny"
} else := a

paths := [c.path | some c in changes]

fields := lib.list([text |
	some c in changes
	text := sprintf("%s (last-applied %s, now %s)", [c.path, lib.show(c, "lastApplied"), lib.show_or(c, "result", "removed")])
])

# writer names the request: its user and field manager, and that the
# manager is a deployment tool (lib.deploy_tool).
writer := sprintf("this write by %s (field manager %s, a deployment tool)", [input.request.user.username, input.request.fieldManager]) if {
	lib.deploy_tool
} else := sprintf("this write by %s (field manager %s)", [input.request.user.username, input.request.fieldManager]) if {
	input.request.fieldManager != ""
} else := sprintf("this write by %s", [input.request.user.username])

# puts_back is what the next kubectl apply does to the changes it can
# take back.
puts_back := "puts the last-applied values back without a word"

# message says what the next kubectl apply does: puts the last-applied
# values back, or, when the API server refuses to put one back
# (revertRefused), fails. A deployment tool's write (lib.deploy_tool) is
# that tool's apply: its remedy is the hand-over, if the tool now manages
# the fields.
message := sprintf(
	"[imperative-edit] %s: %s changes fields that last-applied owns: %s; the next kubectl apply %s. If %s manages them now, hand them over to it by deleting them from last-applied with: %s%s",
	[lib.describe, writer, fields, tool_consequence, input.request.fieldManager, lib.handover(paths), lib.handover_more(paths)],
) if {
	lib.deploy_tool
} else := sprintf(
	"[imperative-edit] %s: %s changes fields that last-applied owns: %s; the next kubectl apply %s. Put %s in your manifest and run kubectl apply",
	[lib.describe, writer, fields, fails, put_in],
) if {
	refused[0]
} else := sprintf(
	"[imperative-edit] %s: %s changes fields that last-applied owns: %s; the next kubectl apply %s. Put the change in your manifest and run kubectl apply, or hand a field over to its new writer by deleting it from last-applied first with: %s%s",
	[lib.describe, writer, fields, puts_back, lib.handover(paths), lib.handover_more(paths)],
)

server_side_message := sprintf(
	"[imperative-edit] %s: this server-side apply by %s (field manager %s) changes fields that last-applied owns: %s; the next client-side kubectl apply %s. Put the change in the manifest you apply with kubectl apply, or apply it with kubectl apply --server-side from now on",
	[lib.describe, input.request.user.username, input.request.fieldManager, fields, server_side_consequence],
)

server_side_consequence := fails if refused[0] else := "puts the last-applied values back"

tool_consequence := fails if refused[0] else := puts_back

# refused are the changes whose last-applied value the API server refuses
# to take back (merge's revertRefused): a claim's storage request the
# apply would shrink.
refused := [c | some c in changes; c.revertRefused]

# fails says why the next apply fails. The apply is one request: once the
# API server refuses a field of it, it puts none of the others back
# either.
fails := sprintf("fails: %s", [reasons]) if {
	count(refused) == count(changes)
} else := sprintf("fails and puts none of them back: %s", [reasons])

reasons := concat("; ", {refusal(c) | some c in refused})

refusal(c) := "the API server does not shrink a claim's storage request" if {
	claim_storage(c)
} else := sprintf("the API server refuses to set %s back", [c.path])

# claim_storage(c) holds for a change of a core claim's storage request.
claim_storage(c) if {
	lib.obj.apiVersion == "v1"
	lib.obj.kind == "PersistentVolumeClaim"
	c.path == "spec.resources.requests.storage"
}

# put_in is what the remedy puts in the manifest. No hand-over: with the
# field gone from last-applied, a manifest that keeps it (a claim needs
# its storage request) would shrink it all the same.
put_in := put_in_one(changes[0]) if count(changes) == 1 else := "the changes"

# put_in_one(c) is what the remedy of one refused change puts in the
# manifest.
put_in_one(c) := "the new size" if claim_storage(c) else := "the change"

# The audit: a field of a stored object that a person changed away from
# last-applied.
decisions contains lib.fixed(lib.decision("imperative-edit", audit_message(f), [f.path]), lib.handover([f.path])) if {
	some f in lib.audit_drift
	lib.by_person(f)
}

# when(f) names who changed a field outside apply, and when.
when(f) := sprintf(" by %s", [lib.who(f)]) if lib.changer(f) else := ""

audit_message(f) := sprintf(
	"[imperative-edit] %s: %s was changed outside kubectl apply%s (last-applied %s, now %s); the next kubectl apply fails: %s. Put %s in your manifest and run kubectl apply",
	[lib.describe, f.path, when(f), lib.show(f, "lastApplied"), lib.show_or(f, "live", "removed"), refusal(f), put_in_one(f)],
) if {
	f.revertRefused
} else := sprintf(
	"[imperative-edit] %s: %s was changed outside kubectl apply%s (last-applied %s, now %s); the next kubectl apply puts the last-applied value back without a word. Put the change in your manifest and run kubectl apply, or hand the field over to its new writer by deleting it from last-applied first with: %s",
	[lib.describe, f.path, when(f), lib.show(f, "lastApplied"), lib.show_or(f, "live", "removed"), lib.handover([f.path])],
)
