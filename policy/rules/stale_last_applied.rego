# stale-last-applied: a rollout undo restored an older pod template but left
# last-applied describing the newer manifest, so the next apply computes its
# deletions against the wrong original.
package applyhygiene.rules.stale_last_applied

import data.applyhygiene.lib

rollback := lib.analysis.rollback

decisions contains d if {
	input.classification == "rollout-undo"
	rollback.staleLastApplied == true
	a := effective(lib.action("stale-last-applied"))
	d := {"rule": "stale-last-applied", "action": a, "message": message(a), "paths": paths}
}

# effective(a) is a, except that a repair needs a repaired annotation:
# without one the rule can only warn.
effective(a) := "warn" if {
	a == "repair"
	object.get(rollback, "repairedLastApplied", "") == ""
} else := a

paths := [c.path | some c in object.get(rollback, "changes", [])]

message(a) := sprintf(
	"[stale-last-applied] %s: rollout undo restored revision %d but last-applied still described the newer manifest; apply-hygiene rewrote last-applied to match revision %d, so the next kubectl apply deletes what your manifest no longer has. Check with: kubectl apply view-last-applied %s",
	[lib.describe, rollback.revision, rollback.revision, lib.target],
) if {
	a == "repair"
} else := sprintf(
	"[stale-last-applied] %s: rollout undo restored revision %d but last-applied still describes the newer manifest, so the next kubectl apply will not delete what revision %d has and your manifest does not (%s). Check with: kubectl apply view-last-applied %s",
	[lib.describe, rollback.revision, rollback.revision, lib.list(paths), lib.target],
)
