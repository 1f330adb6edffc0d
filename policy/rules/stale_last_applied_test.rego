package applyhygiene.rules.stale_last_applied_test

import data.applyhygiene.rules.stale_last_applied
import data.applyhygiene.testing as t

# From seed 004: undo to revision 1 brought TO_BE_DELETED back.
rollback := {
	"revisionKind": "ControllerRevision",
	"revisionName": "nginx-5d8c7b",
	"revision": 1,
	"staleLastApplied": true,
	"repairSource": "controllerRevision",
	"repairedLastApplied": `{"apiVersion":"apps/v1","kind":"Deployment"}`,
	"changes": [
		{"path": "spec.template.spec.containers[name=nginx].image", "live": "nginx:a-broken-version", "result": "nginx:latest"},
		{"path": "spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]", "result": {"name": "TO_BE_DELETED", "value": "needs to be deleted!"}},
	],
}

undo := t.make_input("rollout-undo", "", {"operation": "update", "rollback": rollback})

test_stale_last_applied_is_repaired if {
	ds := stale_last_applied.decisions with input as undo
	t.actions(ds) == {["stale-last-applied", "repair"]}
	t.paths(ds) == {c.path | some c in rollback.changes}
	t.all_start_with_rule(ds)
	some d in ds
	d.message == "[stale-last-applied] Deployment default/nginx: rollout undo restored revision 1 but last-applied still described the newer manifest; apply-hygiene rewrote last-applied to match revision 1, so the next kubectl apply deletes what your manifest no longer has. Check with: kubectl apply view-last-applied deployment/nginx -n default"
}

test_warn_when_configured if {
	ds := stale_last_applied.decisions with input as undo
		with data.applyhygiene.config as {"rules": {"stale-last-applied": {"action": "warn"}}}
	t.actions(ds) == {["stale-last-applied", "warn"]}
	some d in ds
	contains(d.message, "will not delete what revision 1 has and your manifest does not (spec.template.spec.containers[name=nginx].image, spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED])")
}

test_repair_without_annotation_warns if {
	ds := stale_last_applied.decisions with input as undo
		with input.analysis.rollback.repairedLastApplied as ""
	t.actions(ds) == {["stale-last-applied", "warn"]}
}

test_fresh_last_applied_no_decision if {
	ds := stale_last_applied.decisions with input as undo
		with input.analysis.rollback.staleLastApplied as false
	count(ds) == 0
}

test_only_undo_is_checked if {
	ds := stale_last_applied.decisions with input as undo
		with input.classification as "imperative"
	count(ds) == 0
}
