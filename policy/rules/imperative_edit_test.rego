package applyhygiene.rules.imperative_edit_test

import data.applyhygiene.rules.imperative_edit
import data.applyhygiene.testing as t

image := {
	"path": "spec.template.spec.containers[name=nginx].image",
	"live": "nginx:1.14.2",
	"result": "nginx:1.16.1",
	"lastApplied": "nginx:1.14.2",
}

replicas := {"path": "spec.replicas", "live": 2, "result": 5, "lastApplied": 2}

min_ready := {"path": "spec.minReadySeconds", "live": 5, "lastApplied": 5}

test_edit_of_owned_field_is_denied if {
	ds := imperative_edit.decisions with input as t.make_input("imperative", "kubectl-edit", {"imperativeChanges": [image]})
	t.actions(ds) == {["imperative-edit", "deny"]}
	t.paths(ds) == {image.path}
	t.all_start_with_rule(ds)
	some d in ds
	contains(d.message, `spec.template.spec.containers[name=nginx].image (last-applied "nginx:1.14.2", now "nginx:1.16.1")`)
	endswith(d.message, "kubectl hygiene handover deployments.apps/nginx -n default 'spec.template.spec.containers[name=nginx].image'")
}

test_removed_field_reads_removed if {
	ds := imperative_edit.decisions with input as t.make_input("imperative", "kubectl-patch", {"imperativeChanges": [min_ready]})
	some d in ds
	contains(d.message, "spec.minReadySeconds (last-applied 5, now removed)")
}

test_scale_is_denied if {
	ds := imperative_edit.decisions with input as t.make_input("scale", "kubectl", {"imperativeChanges": [replicas]})
	t.actions(ds) == {["imperative-edit", "deny"]}
}

test_rollout_restart_is_covered if {
	ds := imperative_edit.decisions with input as t.make_input("rollout-restart", "kubectl-rollout", {"imperativeChanges": [image]})
	count(ds) == 1
}

test_one_decision_lists_every_field if {
	ds := imperative_edit.decisions with input as t.make_input("imperative", "kubectl-edit", {"imperativeChanges": [image, replicas]})
	count(ds) == 1
	t.paths(ds) == {image.path, replicas.path}
}

test_long_lists_are_cut if {
	many := [object.union(replicas, {"path": sprintf("spec.f%d", [i])}) | some i in numbers.range(1, 7)]
	ds := imperative_edit.decisions with input as t.make_input("imperative", "kubectl-edit", {"imperativeChanges": many})
	some d in ds
	contains(d.message, "spec.f5 (last-applied 2, now 5) and 2 more")
	count(d.paths) == 7
}

# The hand-over command names the fields the message lists, at most
# lib.max_listed, so that it stays whole within a warning cut at 1024
# bytes (found by review: it was cut in the middle), and says outside the
# command how many it leaves out.
test_long_lists_keep_the_handover_whole if {
	many := [object.union(replicas, {"path": sprintf("spec.f%d", [i])}) | some i in numbers.range(1, 7)]
	ds := imperative_edit.decisions with input as t.make_input("imperative", "kubectl-edit", {"imperativeChanges": many})
	some d in ds
	d.fix == "kubectl hygiene handover deployments.apps/nginx -n default spec.f1 spec.f2 spec.f3 spec.f4 spec.f5"
	endswith(d.message, "first with: kubectl hygiene handover deployments.apps/nginx -n default spec.f1 spec.f2 spec.f3 spec.f4 spec.f5 (it names the first 5 of the 7 fields; hand the 2 others over the same way)")
}

test_service_account_is_warned if {
	ds := imperative_edit.decisions with input as t.make_input("imperative", "kubectl-edit", {"imperativeChanges": [image]})
		with input.request.user as t.robot
	t.actions(ds) == {["imperative-edit", "warn"]}
}

test_controller_is_never_reported if {
	ds := imperative_edit.decisions with input as t.make_input("controller", "deployment-controller", {"imperativeChanges": [image]})
	count(ds) == 0
}

test_apply_is_not_an_edit if {
	ds := imperative_edit.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"imperativeChanges": [image]})
	count(ds) == 0
}

test_no_change_no_decision if {
	ds := imperative_edit.decisions with input as t.make_input("imperative", "kubectl-edit", {})
	count(ds) == 0
}

test_null_changes_no_decision if {
	ds := imperative_edit.decisions with input as t.make_input("imperative", "kubectl-edit", {"imperativeChanges": null})
	count(ds) == 0
}

test_writer_without_manager if {
	ds := imperative_edit.decisions with input as t.make_input("imperative", "", {"imperativeChanges": [image]})
	some d in ds
	contains(d.message, "this write by alice changes")
}

# A server-side apply by another manager that moves a field last-applied
# owns (issue 25) is warned about, never denied, even for a person and
# when the rule is configured to deny.
test_server_side_apply_of_owned_field_is_warned if {
	ds := imperative_edit.decisions with input as t.make_input("server-side-apply", "deploy-bot", {"imperativeChanges": [image]})
	t.actions(ds) == {["imperative-edit", "warn"]}
	t.paths(ds) == {image.path}
	t.all_start_with_rule(ds)
	some d in ds
	d.message == concat("", [
		"[imperative-edit] Deployment default/nginx: this server-side apply by alice (field manager deploy-bot) changes fields that last-applied owns: ",
		`spec.template.spec.containers[name=nginx].image (last-applied "nginx:1.14.2", now "nginx:1.16.1"); `,
		"the next client-side kubectl apply puts the last-applied values back. ",
		"Put the change in the manifest you apply with kubectl apply, or apply it with kubectl apply --server-side from now on",
	])
}

test_server_side_apply_is_never_denied if {
	ds := imperative_edit.decisions with input as t.make_input("server-side-apply", "deploy-bot", {"imperativeChanges": [image]})
		with data.applyhygiene.config.rules as {"imperative-edit": {"action": "deny", "serviceAccountAction": "deny", "breakGlassAction": "deny"}}
	t.actions(ds) == {["imperative-edit", "warn"]}
}

test_server_side_apply_in_dryrun_namespace_stays_dryrun if {
	ds := imperative_edit.decisions with input as t.make_input("server-side-apply", "deploy-bot", {"imperativeChanges": [image]})
		with input.namespace.labels as {"apply-hygiene.io/enforcement": "dryrun"}
	t.actions(ds) == {["imperative-edit", "dryrun"]}
}

test_server_side_apply_without_changes_is_silent if {
	ds := imperative_edit.decisions with input as t.make_input("server-side-apply", "kubectl", {"imperativeChanges": []})
	count(ds) == 0
}

claim := {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": "default", "name": "data"}

# claim_input(classification, manager, changes) is a write by alice to
# PersistentVolumeClaim default/data with changes as its imperative ones.
claim_input(classification, manager, changes) := object.union(
	t.make_input(classification, manager, {"object": claim, "imperativeChanges": changes}),
	{"request": {"object": claim, "resource": {"group": "", "resource": "persistentvolumeclaims"}}},
)

# kubectl patch pvc data -p '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}'
# under a manifest of 1Gi: merge marks the revert refused.
expanded := {
	"path": "spec.resources.requests.storage",
	"live": "1Gi",
	"result": "2Gi",
	"lastApplied": "1Gi",
	"revertRefused": true,
}

# The same field shrunk in live (were it to reach us): the next apply
# grows it back, which the API server allows.
shrunk := {"path": "spec.resources.requests.storage", "live": "2Gi", "result": "1Gi", "lastApplied": "2Gi"}

tier := {"path": "metadata.labels.tier", "live": "db", "result": "cache", "lastApplied": "db"}

# The API server does not shrink a claim's storage request: the next
# kubectl apply fails, it puts nothing back. The finding and its decision
# stay; only the consequence changes.
test_claim_expansion_says_the_next_apply_fails if {
	ds := imperative_edit.decisions with input as claim_input("imperative", "kubectl-patch", [expanded])
	t.actions(ds) == {["imperative-edit", "deny"]}
	t.paths(ds) == {expanded.path}
	some d in ds
	d.fix == "kubectl hygiene handover persistentvolumeclaims/data -n default spec.resources.requests.storage"
	d.message == concat("", [
		"[imperative-edit] PersistentVolumeClaim default/data: this write by alice (field manager kubectl-patch) changes fields that last-applied owns: ",
		`spec.resources.requests.storage (last-applied "1Gi", now "2Gi"); `,
		"the next kubectl apply fails: the API server does not shrink a claim's storage request. ",
		"Put the new size in your manifest and run kubectl apply",
	])
}

# One refused field fails the whole apply, a single request: the other
# fields are not put back either.
test_claim_expansion_with_another_field_puts_none_back if {
	ds := imperative_edit.decisions with input as claim_input("imperative", "kubectl-edit", [tier, expanded])
	t.paths(ds) == {tier.path, expanded.path}
	some d in ds
	contains(d.message, `; the next kubectl apply fails and puts none of them back: the API server does not shrink a claim's storage request. Put the changes in your manifest and run kubectl apply`)
	not contains(d.message, "without a word")
}

test_claim_shrunk_in_live_keeps_the_put_back_message if {
	ds := imperative_edit.decisions with input as claim_input("imperative", "kubectl-patch", [shrunk])
	some d in ds
	contains(d.message, `spec.resources.requests.storage (last-applied "2Gi", now "1Gi"); the next kubectl apply puts the last-applied values back without a word.`)
	not contains(d.message, "fails")
}

test_deployment_image_keeps_the_put_back_message if {
	ds := imperative_edit.decisions with input as t.make_input("imperative", "kubectl-set", {"imperativeChanges": [image]})
	some d in ds
	d.message == concat("", [
		"[imperative-edit] Deployment default/nginx: this write by alice (field manager kubectl-set) changes fields that last-applied owns: ",
		`spec.template.spec.containers[name=nginx].image (last-applied "nginx:1.14.2", now "nginx:1.16.1"); `,
		"the next kubectl apply puts the last-applied values back without a word. ",
		"Put the change in your manifest and run kubectl apply, or hand a field over to its new writer by deleting it from last-applied first with: ",
		"kubectl hygiene handover deployments.apps/nginx -n default 'spec.template.spec.containers[name=nginx].image'",
	])
}

test_server_side_apply_of_claim_expansion_says_the_next_apply_fails if {
	ds := imperative_edit.decisions with input as claim_input("server-side-apply", "storage-bot", [expanded])
	t.actions(ds) == {["imperative-edit", "warn"]}
	some d in ds
	d.message == concat("", [
		"[imperative-edit] PersistentVolumeClaim default/data: this server-side apply by alice (field manager storage-bot) changes fields that last-applied owns: ",
		`spec.resources.requests.storage (last-applied "1Gi", now "2Gi"); `,
		"the next client-side kubectl apply fails: the API server does not shrink a claim's storage request. ",
		"Put the change in the manifest you apply with kubectl apply, or apply it with kubectl apply --server-side from now on",
	])
}

# A refused revert of another field (none yet: merge marks only a claim's
# storage) names the field.
test_other_refused_revert_names_the_field if {
	ds := imperative_edit.decisions with input as t.make_input("imperative", "kubectl-edit", {"imperativeChanges": [object.union(image, {"revertRefused": true})]})
	some d in ds
	contains(d.message, "; the next kubectl apply fails: the API server refuses to set spec.template.spec.containers[name=nginx].image back. Put the change in your manifest and run kubectl apply")
}

# A deployment tool that writes with Update (Helm 3's upgrade and
# rollback, field manager helm) applies its own manifests: a person's run
# of it that changes fields kubectl's last-applied owns (an object first
# applied with kubectl, then adopted by Helm) is warned about, not denied.
test_deploy_tool_write_is_warned if {
	ds := imperative_edit.decisions with input as t.make_input("imperative", "helm", {"imperativeChanges": [image]})
	t.actions(ds) == {["imperative-edit", "warn"]}
	t.paths(ds) == {image.path}
	some d in ds
	d.message == concat("", [
		"[imperative-edit] Deployment default/nginx: this write by alice (field manager helm, a deployment tool) changes fields that last-applied owns: ",
		`spec.template.spec.containers[name=nginx].image (last-applied "nginx:1.14.2", now "nginx:1.16.1"); `,
		"the next kubectl apply puts the last-applied values back without a word. ",
		"If helm manages them now, hand them over to it by deleting them from last-applied with: ",
		"kubectl hygiene handover deployments.apps/nginx -n default 'spec.template.spec.containers[name=nginx].image'",
	])
	d.fix == "kubectl hygiene handover deployments.apps/nginx -n default 'spec.template.spec.containers[name=nginx].image'"
}

test_deploy_tool_action_is_configurable if {
	ds := imperative_edit.decisions with input as t.make_input("imperative", "helm", {"imperativeChanges": [image]})
		with data.applyhygiene.config.rules as {"imperative-edit": {"deployToolAction": "deny"}}
	t.actions(ds) == {["imperative-edit", "deny"]}
}

test_deploy_tools_are_configurable if {
	helm := imperative_edit.decisions with input as t.make_input("imperative", "helm", {"imperativeChanges": [image]})
		with data.applyhygiene.config.deployTools as ["Terraform"]
	t.actions(helm) == {["imperative-edit", "deny"]}
	terraform := imperative_edit.decisions with input as t.make_input("imperative", "Terraform", {"imperativeChanges": [image]})
		with data.applyhygiene.config.deployTools as ["Terraform"]
	t.actions(terraform) == {["imperative-edit", "warn"]}
}

# Names are exact, and kubectl's own commands are never a deployment tool
# by default.
test_other_managers_are_no_deploy_tool if {
	every manager in ["Helm", "kubectl-edit", "kubectl-patch", "helm-cli", ""] {
		ds := imperative_edit.decisions with input as t.make_input("imperative", manager, {"imperativeChanges": [image]})
		t.actions(ds) == {["imperative-edit", "deny"]}
	}
}

# The deployment tool's action wins over the service account's: it says
# what kind of write this is, whoever runs the tool.
test_deploy_tool_action_wins_over_service_account if {
	ds := imperative_edit.decisions with input as t.make_input("imperative", "helm", {"imperativeChanges": [image]})
		with input.request.user as t.robot
		with data.applyhygiene.config.rules as {"imperative-edit": {"serviceAccountAction": "deny"}}
	t.actions(ds) == {["imperative-edit", "warn"]}
}

test_deploy_tool_in_dryrun_namespace_stays_dryrun if {
	ds := imperative_edit.decisions with input as t.make_input("imperative", "helm", {"imperativeChanges": [image]})
		with input.namespace.labels as {"apply-hygiene.io/enforcement": "dryrun"}
	t.actions(ds) == {["imperative-edit", "dryrun"]}
}

test_deploy_tool_claim_expansion_says_the_next_apply_fails if {
	ds := imperative_edit.decisions with input as claim_input("imperative", "helm", [expanded])
	t.actions(ds) == {["imperative-edit", "warn"]}
	some d in ds
	d.message == concat("", [
		"[imperative-edit] PersistentVolumeClaim default/data: this write by alice (field manager helm, a deployment tool) changes fields that last-applied owns: ",
		`spec.resources.requests.storage (last-applied "1Gi", now "2Gi"); `,
		"the next kubectl apply fails: the API server does not shrink a claim's storage request. ",
		"If helm manages them now, hand them over to it by deleting them from last-applied with: ",
		"kubectl hygiene handover persistentvolumeclaims/data -n default spec.resources.requests.storage",
	])
}
