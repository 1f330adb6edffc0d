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
