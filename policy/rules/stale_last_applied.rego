# stale-last-applied: a rollout undo restored an older pod template but left
# last-applied describing the newer manifest, so the next apply computes its
# deletions against the wrong original.
#
# A write that only looks like an undo (analysis.rollback.confirmed false:
# its template matches no revision exactly, because another mutating webhook
# changed it or the revision predates a default the server now adds) is
# never denied nor repaired: the rule warns that last-applied may be stale.
package applyhygiene.rules.stale_last_applied

import data.applyhygiene.lib

rollback := input.analysis.rollback

# unconfirmed is true for a write that looks like an undo but restored no
# revision exactly. Inputs without rollback.confirmed are confirmed undos.
unconfirmed if rollback.confirmed == false

decisions contains d if {
	input.classification == "rollout-undo"
	not unconfirmed
	rollback.staleLastApplied == true
	a := effective(lib.action("stale-last-applied"))
	d := object.union(
		{"rule": "stale-last-applied", "action": a, "message": message(a), "paths": paths, "fix": lib.view_last_applied},
		remedy(a),
	)
}

# remedy(a) writes the repaired last-applied (analysis.rollback's
# repairedLastApplied, which merge rebuilt or took from the revision) in
# the same request, when the action writes.
remedy(a) := {"patch": [{"op": "add", "path": lib.last_applied_pointer, "value": rollback.repairedLastApplied}]} if {
	lib.writes(a)
	object.get(rollback, "repairedLastApplied", "") != ""
} else := {}

decisions contains d if {
	input.classification == "rollout-undo"
	unconfirmed
	a := at_most_warn(lib.action("stale-last-applied"))
	d := {"rule": "stale-last-applied", "action": a, "message": unconfirmed_message, "paths": paths, "fix": lib.explain}
}

# effective(a) is a, except that a repair needs a repaired annotation:
# without one the rule can only warn.
effective(a) := "warn" if {
	a == "repair"
	object.get(rollback, "repairedLastApplied", "") == ""
} else := a

# at_most_warn(a) is the action for an unconfirmed undo: dryrun stays
# dryrun, every other action (deny, repair, prune) becomes warn. An undo is
# the emergency action; apply-hygiene blocks or rewrites it only on a proven
# match.
at_most_warn(a) := a if {
	a in {"warn", "dryrun"}
} else := "warn"

paths := [c.path | some c in object.get(rollback, "changes", [])]

message(a) := sprintf(
	"[stale-last-applied] %s: rollout undo restored revision %d but last-applied still described the newer manifest; apply-hygiene rewrote last-applied to match revision %d (this supersedes kubectl's warning that rolling back will not update last-applied), so the next kubectl apply deletes what your manifest no longer has. Check with: %s",
	[lib.describe, rollback.revision, rollback.revision, lib.view_last_applied],
) if {
	a == "repair"
} else := sprintf(
	"[stale-last-applied] %s: rollout undo restored revision %d but last-applied still describes the newer manifest, so the next kubectl apply will not delete what revision %d has and your manifest does not (%s). Check with: %s",
	[lib.describe, rollback.revision, rollback.revision, lib.list(paths), lib.view_last_applied],
)

unconfirmed_message := sprintf(
	"[stale-last-applied] %s: this write looks like a rollout undo, but its pod template matches none of the revisions exactly (another mutating webhook may have changed it, or the revision predates a default the server now adds), so apply-hygiene left last-applied as it was. It may still describe the newer manifest; then the next kubectl apply will not delete what the restored template has and your manifest does not. See where live differs from last-applied with: %s",
	[lib.describe, lib.explain],
)

# The audit: a stored object whose pod template is an older revision than
# the one last-applied describes.
decisions contains d if {
	lib.audited
	lib.audit_stale
	a := effective(lib.action("stale-last-applied"))
	d := object.union(
		{"rule": "stale-last-applied", "action": a, "message": audit_message, "paths": [lib.last_applied_path], "auditFix": lib.audit_fix("stale-last-applied"), "fix": lib.view_last_applied},
		audit_remedy,
	)
}

# audit_remedy replaces the stored last-applied with the repaired one; the
# audit decides whether to write it (its scope, the owners of
# last-applied) and guards it with a test of the annotation it read.
audit_remedy := {"patch": [{"op": "replace", "path": lib.last_applied_pointer, "value": rollback.repairedLastApplied}]} if {
	object.get(rollback, "repairedLastApplied", "") != ""
} else := {}

audit_message := sprintf(
	"[stale-last-applied] %s: the pod template is revision %d (%s %s, restored by a rollout undo) but last-applied still describes a newer manifest, so the next kubectl apply will not delete what revision %d has and your manifest does not (%s). Apply the manifest you mean to run, or check with: %s",
	[lib.describe, rollback.revision, rollback.revisionKind, rollback.revisionName, rollback.revision, lib.list(paths), lib.view_last_applied],
)
