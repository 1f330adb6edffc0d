# audit: the rules applied to an object as stored, for classification
# "audit" (kubectl hygiene audit and the server's periodic audit, package
# audit). The analysis is merge's live analysis: the state of last-applied,
# the fields that drifted from it, the orphans, and a rollback when the pod
# template is an older revision than the one last-applied describes. Each
# finding keeps the rule ID that admission uses for the write that caused
# it; the messages describe the stored object instead of a request.
# invalid-last-applied needs nothing here: its rule applies to any input.
package applyhygiene.rules.audit

import data.applyhygiene.lib

audited if input.classification == "audit"

present if input.analysis.lastApplied.status == "present"

default rollback := {}

rollback := input.analysis.rollback if input.analysis.rollback != null

stale if rollback.staleLastApplied == true

# explained(p) is true when the stale last-applied explains the field at p:
# the undo changed it, so the stale-last-applied finding covers it.
explained(p) if {
	stale
	some c in rollback.changes
	related(p, c.path)
}

related(p, q) if p == q

related(p, q) if startswith(p, concat("", [q, "."]))

related(p, q) if startswith(p, concat("", [q, "["]))

related(p, q) if startswith(q, concat("", [p, "."]))

related(p, q) if startswith(q, concat("", [p, "["]))

# by_person(f) is true when a person (a kubectl field manager, or nobody
# known) changed the drifted field last; drift that a controller (an
# autoscaler, an operator) made is reported as apply-reverts-drift.
by_person(f) if not lib.changer(f)

by_person(f) if lib.changer(f).manager == "kubectl"

by_person(f) if startswith(lib.changer(f).manager, "kubectl-")

drift contains f if {
	audited
	present
	some f in input.analysis.drift
	not explained(f.path)
}

decisions contains lib.decision("imperative-edit", edit_message(f), [f.path]) if {
	some f in drift
	by_person(f)
}

decisions contains lib.decision("apply-reverts-drift", revert_message(f), [f.path]) if {
	some f in drift
	not by_person(f)
}

decisions contains d if {
	audited
	present
	a := lib.action("orphaned-field")
	some o in input.analysis.orphans
	not explained(o.path)
	d := {"rule": "orphaned-field", "action": a, "message": orphan_message(o), "paths": [o.path], "auditFix": lib.audit_fix("orphaned-field")}
}

decisions contains lib.decision("missing-last-applied", missing_message, [lib.last_applied_path]) if {
	audited
	input.analysis.lastApplied.status == "missing"
}

decisions contains lib.decision("last-applied-too-large", too_large_message, [lib.last_applied_path]) if {
	audited
	input.analysis.lastAppliedTooLarge == true
}

decisions contains d if {
	audited
	stale
	a := stale_action(lib.action("stale-last-applied"))
	d := {"rule": "stale-last-applied", "action": a, "message": stale_message, "paths": [lib.last_applied_path], "auditFix": lib.audit_fix("stale-last-applied")}
}

# stale_action(a) is a, except that a repair needs a repaired annotation.
stale_action(a) := "warn" if {
	a == "repair"
	object.get(rollback, "repairedLastApplied", "") == ""
} else := a

# when(f) names who changed a field outside apply, and when.
when(f) := sprintf(" by %s", [lib.who(f)]) if lib.changer(f) else := ""

edit_message(f) := sprintf(
	"[imperative-edit] %s: %s was changed outside kubectl apply%s (last-applied %s, now %s); the next kubectl apply puts the last-applied value back without a word. Put the change in your manifest and run kubectl apply, or hand the field over to its new writer by deleting it from last-applied first with: kubectl apply edit-last-applied %s",
	[lib.describe, f.path, when(f), lib.show(f, "lastApplied"), lib.show_or(f, "live", "removed"), lib.target],
)

revert_message(f) := sprintf(
	"[apply-reverts-drift] %s: the next kubectl apply sets %s back to %s, discarding %s set by %s since the last apply. To keep that value, put it in your manifest before you apply; see every drifted field with: kubectl hygiene explain %s",
	[lib.describe, f.path, lib.show(f, "lastApplied"), lib.show(f, "live"), lib.who(f), lib.target],
)

setter(o) := lib.owner_text(o.owners[0]) if o.owners[0] else := "an unknown writer"

# orphan_fix(o) is the command that removes o, after what the removal does
# to the pods when o is inside a pod template (lib.template_change).
orphan_fix(o) := sprintf("%s. %s", [lib.template_change(o.path, "Removing it"), orphan_command(o)]) if {
	lib.template_change(o.path, "Removing it")
} else := orphan_command(o)

orphan_command(o) := sprintf("Remove it with: kubectl patch %s --type=json -p %s", [lib.target, lib.shell_quote(o.removePatch)]) if {
	object.get(o, "removePatch", "") != ""
} else := sprintf("Remove it with: kubectl edit %s", [lib.target])

orphan_message(o) := sprintf(
	"[orphaned-field] %s: %s (%s, set by %s) is not in last-applied, so kubectl apply will never remove it unless your manifest sets it. %s",
	[lib.describe, o.path, lib.show(o, "live"), setter(o), orphan_fix(o)],
)

missing_message := sprintf(
	"[missing-last-applied] %s: the object has no kubectl.kubernetes.io/last-applied-configuration annotation (objects made by kubectl create or replace without --save-config have none), so kubectl apply cannot delete fields that your manifest does not have. Record your manifest first with: kubectl apply set-last-applied -f <manifest> --create-annotation",
	[lib.describe],
)

too_large_message := sprintf(
	"[last-applied-too-large] %s: the annotations take %d bytes (last-applied alone %d), more than 80%% of the 262144-byte limit; once they pass it, kubectl apply fails. Switch this object to server-side apply, which keeps no last-applied: kubectl apply --server-side -f <manifest>",
	[lib.describe, input.analysis.annotationsBytes, input.analysis.lastApplied.bytes],
)

changed := [c.path | some c in object.get(rollback, "changes", [])]

stale_message := sprintf(
	"[stale-last-applied] %s: the pod template is revision %d (%s %s, restored by a rollout undo) but last-applied still describes a newer manifest, so the next kubectl apply will not delete what revision %d has and your manifest does not (%s). Apply the manifest you mean to run, or check with: kubectl apply view-last-applied %s",
	[lib.describe, rollback.revision, rollback.revisionKind, rollback.revisionName, rollback.revision, lib.list(changed), lib.target],
)
