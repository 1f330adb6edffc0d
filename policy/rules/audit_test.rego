package applyhygiene.rules.audit_test

import data.applyhygiene
import data.applyhygiene.testing as t

# A stored object: nobody writes, so no user and no field manager.
stored(analysis) := object.union(t.make_input("audit", "", object.union({"operation": "live"}, analysis)), {"request": {
	"operation": "",
	"user": {"username": "", "groups": [], "serviceAccount": false},
}})

edited := {
	"path": "spec.template.spec.containers[name=nginx].image",
	"live": "nginx:1.99",
	"lastApplied": "nginx:1.14.2",
	"owners": [{"manager": "kubectl-edit", "operation": "Update", "time": "2024-05-01T10:00:00Z"}],
}

autoscaled := {
	"path": "spec.replicas",
	"live": 7,
	"lastApplied": 2,
	"owners": [{"manager": "horizontal-pod-autoscaler", "operation": "Update", "subresource": "scale", "time": "2024-05-01T11:00:00Z"}],
}

restarted := {
	"path": "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]",
	"live": "2024-05-01T12:00:00Z",
	"owners": [{"manager": "kubectl-rollout", "operation": "Update", "time": "2024-05-01T12:00:00Z"}],
	"removePatch": `[{"op":"remove","path":"/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt"}]`,
}

# Seed 004 after the undo: the template is revision 1, last-applied is v2.
undone := {
	"drift": [object.union(edited, {"live": "nginx:latest", "lastApplied": "nginx:a-broken-version", "owners": [{"manager": "kubectl", "operation": "Update"}]})],
	"orphans": [{"path": "spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]", "live": {"name": "TO_BE_DELETED", "value": "needs to be deleted!"}}],
	"rollback": {
		"revisionKind": "ControllerRevision",
		"revisionName": "nginx-946448b85",
		"revision": 1,
		"staleLastApplied": true,
		"repairSource": "controllerRevision",
		"repairedLastApplied": "{}",
		"changes": [
			{"path": "spec.template.spec.containers[name=nginx].image"},
			{"path": "spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]"},
		],
	},
}

test_edited_field_is_an_imperative_edit if {
	ds := applyhygiene.decisions with input as stored({"drift": [edited]})
	t.actions(ds) == {["imperative-edit", "deny"]}
	t.paths(ds) == {edited.path}
	t.all_start_with_rule(ds)
	some d in ds
	contains(d.message, `spec.template.spec.containers[name=nginx].image was changed outside kubectl apply by kubectl-edit at 2024-05-01T10:00:00Z (last-applied "nginx:1.14.2", now "nginx:1.99")`)
	endswith(d.message, "kubectl hygiene handover deployments.apps/nginx -n default 'spec.template.spec.containers[name=nginx].image'")
	d.fix == "kubectl hygiene handover deployments.apps/nginx -n default 'spec.template.spec.containers[name=nginx].image'"
}

test_one_decision_per_drifted_field if {
	other := object.union(edited, {"path": "spec.minReadySeconds", "live": null, "lastApplied": 5})
	ds := applyhygiene.decisions with input as stored({"drift": [edited, other]})
	count(ds) == 2
	some d in ds
	contains(d.message, "spec.minReadySeconds was changed outside kubectl apply by kubectl-edit at 2024-05-01T10:00:00Z (last-applied 5, now removed)")
}

test_drift_by_a_controller_is_a_revert if {
	ds := applyhygiene.decisions with input as stored({"drift": [autoscaled]})
	t.actions(ds) == {["apply-reverts-drift", "warn"]}
	some d in ds
	contains(d.message, "the next kubectl apply sets spec.replicas back to 2, discarding 7 set by horizontal-pod-autoscaler at 2024-05-01T11:00:00Z since the last apply")
}

test_drift_by_unknown_writer_is_an_edit if {
	ds := applyhygiene.decisions with input as stored({"drift": [object.remove(edited, ["owners"])]})
	t.actions(ds) == {["imperative-edit", "deny"]}
	some d in ds
	contains(d.message, "was changed outside kubectl apply (last-applied")
}

test_orphan_is_warned_with_command if {
	ds := applyhygiene.decisions with input as stored({"orphans": [restarted]})
	t.actions(ds) == {["orphaned-field", "warn"]}
	some d in ds
	contains(d.message, `("2024-05-01T12:00:00Z", set by kubectl-rollout at 2024-05-01T12:00:00Z) is not in last-applied`)
	endswith(d.message, sprintf("Remove it with: kubectl patch deployments.apps/nginx -n default --type=json -p '%s'", [restarted.removePatch]))
}

test_template_orphan_says_removing_it_rolls_the_pods if {
	ds := applyhygiene.decisions with input as stored({"orphans": [restarted]})
	some d in ds
	contains(d.message, "unless your manifest sets it. Removing it changes the pod template, so it rolls the pods (a new rollout starts). Remove it with: kubectl patch deployments.apps/nginx -n default")
}

test_orphan_without_patch_names_edit if {
	ds := applyhygiene.decisions with input as stored({"orphans": [object.remove(restarted, ["removePatch"])]})
	some d in ds
	endswith(d.message, "Remove it with: kubectl edit deployments.apps/nginx -n default")
}

test_missing_last_applied_is_warned_without_orphans if {
	ds := applyhygiene.decisions with input as stored({"lastApplied": {"status": "missing", "bytes": 0}, "orphans": [restarted]})
	t.actions(ds) == {["missing-last-applied", "warn"]}
	t.paths(ds) == {"metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]"}
	t.all_start_with_rule(ds)
}

test_invalid_last_applied_comes_from_its_rule if {
	ds := applyhygiene.decisions with input as stored({"lastApplied": {"status": "invalid", "bytes": 3, "error": "not JSON"}})
	t.actions(ds) == {["invalid-last-applied", "warn"]}
}

test_too_large_is_warned if {
	ds := applyhygiene.decisions with input as stored({"lastAppliedTooLarge": true, "annotationsBytes": 230000, "lastApplied": {"status": "present", "bytes": 229000}})
	t.actions(ds) == {["last-applied-too-large", "warn"]}
	some d in ds
	contains(d.message, "the annotations take 230000 bytes (last-applied alone 229000)")
}

test_stale_last_applied_covers_what_the_undo_changed if {
	ds := applyhygiene.decisions with input as stored(undone)
	t.actions(ds) == {["stale-last-applied", "repair"]}
	t.paths(ds) == {"metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]"}
	t.all_start_with_rule(ds)
	some d in ds
	contains(d.message, "the pod template is revision 1 (ControllerRevision nginx-946448b85, restored by a rollout undo) but last-applied still describes a newer manifest")
	contains(d.message, "(spec.template.spec.containers[name=nginx].image, spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED])")
}

test_stale_without_repair_is_a_warning if {
	ds := applyhygiene.decisions with input as stored(object.union(undone, {"rollback": {"repairedLastApplied": ""}}))
	t.actions(ds) == {["stale-last-applied", "warn"]}
}

test_namespace_warn_label_applies if {
	ds := applyhygiene.decisions with input as stored({"drift": [edited]})
		with input.namespace.labels as {"apply-hygiene.io/enforcement": "warn"}
	t.actions(ds) == {["imperative-edit", "warn"]}
}

test_configured_action_applies if {
	ds := applyhygiene.decisions with input as stored({"drift": [autoscaled], "orphans": [restarted]})
		with data.applyhygiene.config as {"rules": {"apply-reverts-drift": {"action": "deny"}, "orphaned-field": {"action": "off"}}}
	t.actions(ds) == {["apply-reverts-drift", "deny"]}
}

test_other_classifications_are_not_audited if {
	ds := applyhygiene.decisions with input as t.make_input("imperative", "kubectl-edit", {"drift": [edited], "orphans": [restarted]})
	count(ds) == 0
}

test_clean_object_no_decision if {
	ds := applyhygiene.decisions with input as stored({})
	count(ds) == 0
}

# The audit fix writes a warn finding only where the rule's auditFix knob
# says so: an orphan is reported without it, and fixable with it.
test_orphan_audit_fix_needs_the_rules_knob if {
	[d] := [d | some d in applyhygiene.decisions with input as stored({"orphans": [restarted]})]
	d.auditFix == false
	[e] := [e | some e in applyhygiene.decisions with input as stored({"orphans": [restarted]})
		with data.applyhygiene.config as {"rules": {"orphaned-field": {"auditFix": true}}}]
	e.auditFix == true
	e.action == "warn"
}

# The audit's finding carries the orphan's guarded remove patch, the one
# its command sends, for the audit's fix to write.
test_audit_orphan_carries_its_remove_patch if {
	ds := applyhygiene.decisions with input as stored({"orphans": [restarted]})
	some d in ds
	d.rule == "orphaned-field"
	d.patch == json.unmarshal(restarted.removePatch)
}

test_audit_orphan_without_remove_patch_carries_none if {
	ds := applyhygiene.decisions with input as stored({"orphans": [object.remove(restarted, ["removePatch"])]})
	some d in ds
	d.rule == "orphaned-field"
	not "patch" in object.keys(d)
}
