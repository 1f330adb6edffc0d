package applyhygiene.rules.stale_last_applied_test

import data.applyhygiene.rules.stale_last_applied
import data.applyhygiene.testing as t

# From seed 004: undo to revision 1 brought TO_BE_DELETED back.
rollback := {
	"revisionKind": "ControllerRevision",
	"revisionName": "nginx-5d8c7b",
	"revision": 1,
	"confirmed": true,
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
	d.message == "[stale-last-applied] Deployment default/nginx: rollout undo restored revision 1 but last-applied still described the newer manifest; apply-hygiene rewrote last-applied to match revision 1 (kubectl's rollout undo does not), so the next kubectl apply deletes what your manifest no longer has. Check with: kubectl apply view-last-applied deployments.apps/nginx -n default"
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

test_input_without_confirmed_is_a_confirmed_undo if {
	ds := stale_last_applied.decisions with input as undo
		with input.analysis.rollback as object.remove(rollback, {"confirmed"})
	t.actions(ds) == {["stale-last-applied", "repair"]}
}

# A write that looks like an undo but matches no revision exactly (another
# mutating webhook stamped the template): no revision, no repair.
unconfirmed := {
	"revisionKind": "",
	"revisionName": "",
	"revision": 0,
	"confirmed": false,
	"staleLastApplied": false,
	"changes": rollback.changes,
}

unconfirmed_undo := t.make_input("rollout-undo", "kubectl", {"operation": "update", "lastApplied": {"status": "present", "bytes": 120}, "rollback": unconfirmed})

test_unconfirmed_undo_warns if {
	ds := stale_last_applied.decisions with input as unconfirmed_undo
	t.actions(ds) == {["stale-last-applied", "warn"]}
	t.paths(ds) == {c.path | some c in rollback.changes}
	t.all_start_with_rule(ds)
	some d in ds
	d.message == "[stale-last-applied] Deployment default/nginx: this write looks like a rollout undo, but its pod template matches none of the revisions exactly (another mutating webhook may have changed it, the revision predates a default the server now adds, an older kubectl dropped template fields it does not know, or a tool restored only the revision's pod spec), so apply-hygiene left last-applied as it was. It may still describe the newer manifest; then the next kubectl apply will not delete what the restored template has and your manifest does not. See where live differs from last-applied with: kubectl hygiene explain deployments.apps/nginx -n default"
}

test_unconfirmed_undo_is_never_denied_nor_repaired if {
	every a in ["deny", "repair", "prune", "warn"] {
		ds := stale_last_applied.decisions with input as unconfirmed_undo
			with data.applyhygiene.config as {"rules": {"stale-last-applied": {"action": a}}}
		t.actions(ds) == {["stale-last-applied", "warn"]}
	}
}

test_unconfirmed_undo_follows_dryrun_and_off if {
	dry := stale_last_applied.decisions with input as unconfirmed_undo
		with data.applyhygiene.config as {"rules": {"stale-last-applied": {"action": "dryrun"}}}
	t.actions(dry) == {["stale-last-applied", "dryrun"]}
	off := stale_last_applied.decisions with input as unconfirmed_undo
		with data.applyhygiene.config as {"rules": {"stale-last-applied": {"action": "off"}}}
	count(off) == 0
}

# A write that looks like an undo of an object without a usable
# last-applied (kubectl patch --field-manager= of its template) has no
# last-applied that could be stale: nothing to say (invalid-last-applied
# speaks of an unusable one).
test_unconfirmed_undo_without_last_applied_no_decision if {
	every status in ["missing", "invalid"] {
		count(stale_last_applied.decisions) == 0 with input as unconfirmed_undo
			with input.analysis.lastApplied.status as status
	}
}

test_unconfirmed_undo_of_a_service_account_warns if {
	ds := stale_last_applied.decisions with input as unconfirmed_undo
		with input.request.user as t.robot
		with data.applyhygiene.config as {"rules": {"stale-last-applied": {"action": "deny", "serviceAccountAction": "deny"}}}
	t.actions(ds) == {["stale-last-applied", "warn"]}
}

# The repair's remedy writes the repaired last-applied; a warning carries
# none.
test_repair_carries_the_repaired_last_applied if {
	ds := stale_last_applied.decisions with input as undo
	some d in ds
	d.patch == [{"op": "add", "path": "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration", "value": rollback.repairedLastApplied}]
}

test_warning_carries_no_patch if {
	ds := stale_last_applied.decisions with input as undo
		with data.applyhygiene.config as {"rules": {"stale-last-applied": {"action": "warn"}}}
	some d in ds
	not "patch" in object.keys(d)
}

# A Deployment's undo dropped the hand-over's record: kubectl set the
# annotations to the restored ReplicaSet's, written before the hand-over.
dropped := {"value": `["metadata.labels.team"]`, "paths": ["metadata.labels.team"], "fits": true}

record_path := "metadata.annotations[apply-hygiene.io/handed-over]"

record_op := {"op": "add", "path": "/metadata/annotations/apply-hygiene.io~1handed-over", "value": `["metadata.labels.team"]`}

put_back := `kubectl annotate deployments.apps/nginx -n default --overwrite 'apply-hygiene.io/handed-over=["metadata.labels.team"]'`

# With the repair of last-applied: one decision, one patch, one message.
test_dropped_record_is_written_back_with_the_repair if {
	ds := stale_last_applied.decisions with input as undo
		with input.analysis.rollback.droppedRecord as dropped
	t.actions(ds) == {["stale-last-applied", "repair"]}
	count(ds) == 1
	some d in ds
	d.paths == array.concat([c.path | some c in rollback.changes], [record_path])
	d.patch == [{"op": "add", "path": "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration", "value": rollback.repairedLastApplied}, record_op]
	d.message == "[stale-last-applied] Deployment default/nginx: rollout undo restored revision 1 but last-applied still described the newer manifest; apply-hygiene rewrote last-applied to match revision 1 (kubectl's rollout undo does not), so the next kubectl apply deletes what your manifest no longer has. It also put back the record of the field handed over, which the undo dropped. Check with: kubectl apply view-last-applied deployments.apps/nginx -n default"
}

test_dropped_records_are_counted_with_the_repair if {
	ds := stale_last_applied.decisions with input as undo
		with input.analysis.rollback.droppedRecord as {"value": `["a","b"]`, "paths": ["a", "b"], "fits": true}
	some d in ds
	contains(d.message, " It also put back the record of the 2 fields handed over, which the undo dropped. Check with: ")
}

# Without a stale last-applied, the record is written back on its own.
test_dropped_record_of_a_fresh_last_applied_is_written_back if {
	ds := stale_last_applied.decisions with input as undo
		with input.analysis.rollback.droppedRecord as dropped
		with input.analysis.rollback.staleLastApplied as false
	t.actions(ds) == {["stale-last-applied", "repair"]}
	count(ds) == 1
	some d in ds
	d.paths == [record_path]
	d.patch == [record_op]
	d.message == "[stale-last-applied] Deployment default/nginx: rollout undo set the annotations to the restored revision's, dropping the record of the fields handed over from kubectl apply (metadata.labels.team); apply-hygiene put it back, so they are not reported as orphans. Check with: kubectl hygiene explain deployments.apps/nginx -n default"
	d.fix == "kubectl hygiene explain deployments.apps/nginx -n default"
}

# Told to warn, the rule says how to put the record back, beside its
# warning on last-applied.
test_dropped_record_warns_with_the_command if {
	ds := stale_last_applied.decisions with input as undo
		with input.analysis.rollback.droppedRecord as dropped
		with data.applyhygiene.config as {"rules": {"stale-last-applied": {"action": "warn"}}}
	t.actions(ds) == {["stale-last-applied", "warn"]}
	count(ds) == 2
	some d in ds
	d.paths == [record_path]
	not d.patch
	d.fix == put_back
	d.message == concat("", ["[stale-last-applied] Deployment default/nginx: rollout undo set the annotations to the restored revision's, dropping the record of the fields handed over from kubectl apply (metadata.labels.team); without it they are reported as orphans, and pruned where orphaned-field prunes. Put it back with: ", put_back])
}

# Told to deny, the rule denies the undo of a stale last-applied and says
# nothing of the record, which the denied write does not drop; with a
# fresh last-applied, the undo passes and the record gets a warning, never
# a denial.
test_dropped_record_of_a_denied_undo_is_left if {
	ds := stale_last_applied.decisions with input as undo
		with input.analysis.rollback.droppedRecord as dropped
		with data.applyhygiene.config as {"rules": {"stale-last-applied": {"action": "deny"}}}
	t.actions(ds) == {["stale-last-applied", "deny"]}
	count(ds) == 1
}

test_dropped_record_is_never_denied if {
	ds := stale_last_applied.decisions with input as undo
		with input.analysis.rollback.droppedRecord as dropped
		with input.analysis.rollback.staleLastApplied as false
		with data.applyhygiene.config as {"rules": {"stale-last-applied": {"action": "deny"}}}
	t.actions(ds) == {["stale-last-applied", "warn"]}
	some d in ds
	d.fix == put_back
}

# An unconfirmed undo is never written to: the record gets a warning.
test_dropped_record_of_an_unconfirmed_undo_warns if {
	ds := stale_last_applied.decisions with input as unconfirmed_undo
		with input.analysis.rollback.droppedRecord as dropped
	t.actions(ds) == {["stale-last-applied", "warn"]}
	count([d | some d in ds; d.paths == [record_path]; not d.patch]) == 1
}

# A record that would take the annotations beyond the API server's limit
# is not written: the repair of last-applied goes alone, and the record
# gets a warning.
test_dropped_record_that_does_not_fit_warns if {
	ds := stale_last_applied.decisions with input as undo
		with input.analysis.rollback.droppedRecord as object.union(dropped, {"fits": false})
	t.actions(ds) == {["stale-last-applied", "repair"], ["stale-last-applied", "warn"]}
	some repair in ds
	repair.action == "repair"
	repair.patch == [{"op": "add", "path": "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration", "value": rollback.repairedLastApplied}]
	not contains(repair.message, "record")
	some warn in ds
	warn.action == "warn"
	warn.fix == put_back
}

# In a dryrun namespace the record's decision is a dry run.
test_dropped_record_in_a_dryrun_namespace if {
	ds := stale_last_applied.decisions with input as undo
		with input.analysis.rollback.droppedRecord as dropped
		with input.analysis.rollback.staleLastApplied as false
		with input.namespace.labels as {"apply-hygiene.io/enforcement": "dryrun"}
	t.actions(ds) == {["stale-last-applied", "dryrun"]}
}

# A record that lists no path gets no decision.
test_dropped_record_without_paths_is_left if {
	ds := stale_last_applied.decisions with input as undo
		with input.analysis.rollback.droppedRecord as {"value": "[]", "paths": [], "fits": true}
		with input.analysis.rollback.staleLastApplied as false
	count(ds) == 0
}
