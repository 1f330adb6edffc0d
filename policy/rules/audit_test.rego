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

# A stored claim whose storage a person expanded past its manifest: the
# next apply would shrink it, which the API server refuses (merge's
# revertRefused), so the message cannot say the apply puts it back.
test_expanded_claim_says_the_next_apply_fails if {
	claim := {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": "data", "namespace": "default"}
	expanded := {
		"path": "spec.resources.requests.storage",
		"live": "2Gi",
		"lastApplied": "1Gi",
		"revertRefused": true,
		"owners": [{"manager": "kubectl-patch", "operation": "Update", "time": "2024-05-01T10:00:00Z"}],
	}
	ds := applyhygiene.decisions with input as object.union(stored({"drift": [expanded]}), {"request": {"object": claim}})
	t.actions(ds) == {["imperative-edit", "deny"]}
	some d in ds
	d.message == `[imperative-edit] PersistentVolumeClaim default/data: spec.resources.requests.storage was changed outside kubectl apply by kubectl-patch at 2024-05-01T10:00:00Z (last-applied "1Gi", now "2Gi"); the next kubectl apply fails: the API server does not shrink a claim's storage request. Put the new size in your manifest and run kubectl apply`
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
	ds := applyhygiene.decisions with input as stored({"lastApplied": {"status": "missing", "bytes": 0, "kubectlMade": true}, "orphans": [restarted]})
	t.actions(ds) == {["missing-last-applied", "warn"]}
	t.paths(ds) == {"metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]"}
	t.all_start_with_rule(ds)
}

# Another tool's object that a person only touched with kubectl (a Helm
# release's Deployment after kubectl rollout restart), or one a
# server-side applier manages: no manifest of the person's to record.
test_missing_last_applied_of_an_object_no_person_made_is_silent if {
	ds := applyhygiene.decisions with input as stored({"lastApplied": {"status": "missing", "bytes": 0}, "orphans": [restarted]})
	count(ds) == 0
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

# The audit's fix of an orphan says what it does, naming the field, never
# its value, and whether the removal rolls the pods (lib.rolls_pods): a
# Deployment's template does, a Job's, or a field outside the template,
# does not.
test_audit_orphan_fix_summary_says_whether_it_rolls_the_pods if {
	[d] := [d | some d in applyhygiene.decisions with input as stored({"orphans": [restarted]})]
	d.summary == "removed spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt] (rolls the pods)"
	label := object.union(restarted, {"path": "metadata.labels[team]", "removePatch": `[{"op":"remove","path":"/metadata/labels/team"}]`})
	[e] := [e | some e in applyhygiene.decisions with input as stored({"orphans": [label]})]
	e.summary == "removed metadata.labels[team]"
	[j] := [j | some j in applyhygiene.decisions with input as stored({"orphans": [restarted]})
		with input.request.object.apiVersion as "batch/v1"
		with input.request.object.kind as "Job"]
	j.summary == "removed spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]"
}

# An orphan that kubectl rollout undo's entry owns (restoredByUndo) may
# have come back with the template from a revision: no patch for the
# audit's fix, but the reason; the message's command stays.
test_audit_orphan_restored_by_undo_has_no_fix if {
	[d] := [d | some d in applyhygiene.decisions with input as stored({"orphans": [object.union(restarted, {"restoredByUndo": true})]})]
	not "patch" in object.keys(d)
	not "summary" in object.keys(d)
	d.noFix == "kubectl rollout undo restored it from an earlier revision, which does not prove who first set it (a tool's stamp, such as Reloader's, comes back with the template): remove it yourself if nothing needs it"
	d.fix == sprintf("kubectl patch deployments.apps/nginx -n default --type=json -p '%s'", [restarted.removePatch])
}

# The repair of a stale last-applied replaces the annotation with the
# repaired one, written as the only Update owner of last-applied, and
# names the revision it comes from.
test_audit_repair_is_written_as_the_owner_of_last_applied if {
	owned := object.union(undone, {"rollback": {"lastAppliedUpdaters": ["kubectl-client-side-apply"]}})
	[d] := [d | some d in applyhygiene.decisions with input as stored(owned)]
	d.patch == [{"op": "replace", "path": "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration", "value": "{}"}]
	d.fieldManager == "kubectl-client-side-apply"
	d.summary == "last-applied's pod template set to the one that ControllerRevision nginx-946448b85 (revision 1) kept"
	not "noFix" in object.keys(d)
}

# Without an Update owner the fixer's own manager writes (""); a rebuilt
# last-applied says so.
test_audit_rebuilt_repair_without_owner if {
	rebuilt := object.union(undone, {"rollback": {"repairSource": "rebuilt", "revisionKind": "ReplicaSet", "revisionName": "nginx-7d9c", "revision": 3}})
	[d] := [d | some d in applyhygiene.decisions with input as stored(rebuilt)]
	d.fieldManager == ""
	d.summary == "last-applied rebuilt for the pod template of ReplicaSet nginx-7d9c (revision 3)"
}

# With several Update owners of last-applied, a repair written as one
# would take it from the others: no patch, but the reason.
test_audit_repair_of_last_applied_with_two_owners_has_no_fix if {
	shared := object.union(undone, {"rollback": {"lastAppliedUpdaters": ["kubectl-client-side-apply", "kubectl-edit"]}})
	[d] := [d | some d in applyhygiene.decisions with input as stored(shared)]
	d.action == "repair"
	not "patch" in object.keys(d)
	not "fieldManager" in object.keys(d)
	d.noFix == "last-applied is owned by kubectl-client-side-apply and kubectl-edit: a repair written as one of them would take it from the others, and kubectl apply --server-side would then not upgrade their fields"
}
