package applyhygiene.rules.server_side_owned_test

import data.applyhygiene.rules.server_side_owned
import data.applyhygiene.testing as t

flux := {"manager": "kustomize-controller", "operation": "Apply", "time": "2024-05-01T09:00:00Z"}

kubectl_ssa := {"manager": "kubectl", "operation": "Apply", "time": "2024-05-01T09:00:00Z"}

image := {
	"path": "spec.template.spec.containers[name=nginx].image",
	"live": "nginx:1.14.2",
	"result": "nginx:1.16.1",
	"owners": [flux],
}

replicas := {"path": "spec.replicas", "live": 2, "result": 5, "owners": [flux]}

test_set_image_of_a_flux_field_warns_naming_the_manager if {
	ds := server_side_owned.decisions with input as t.make_input("imperative", "kubectl-set", {"applyOwnedChanges": [image]})
	t.actions(ds) == {["server-side-owned", "warn"]}
	t.paths(ds) == {image.path}
	t.all_start_with_rule(ds)
	some d in ds
	d.message == concat("", [
		"[server-side-owned] Deployment default/nginx: this write by alice (field manager kubectl-set) changes fields that kustomize-controller applies server-side: ",
		`spec.template.spec.containers[name=nginx].image (applied "nginx:1.14.2", now "nginx:1.16.1"); its next apply puts the applied values back. `,
		"It is managed by Flux (kustomize-controller); make the change in the Git source of its Kustomization",
	])
}

test_deny_is_configurable if {
	ds := server_side_owned.decisions with input as t.make_input("imperative", "kubectl-set", {"applyOwnedChanges": [image]})
		with data.applyhygiene.config as {"rules": {"server-side-owned": {"action": "deny"}}}
	t.actions(ds) == {["server-side-owned", "deny"]}
}

test_scale_of_applied_replicas_warns if {
	ds := server_side_owned.decisions with input as t.make_input("scale", "kubectl", {"applyOwnedChanges": [replicas]})
	t.actions(ds) == {["server-side-owned", "warn"]}
	some d in ds
	contains(d.message, "spec.replicas (applied 2, now 5)")
}

test_kubectl_server_side_apply_names_the_conflict if {
	owned := object.union(image, {"owners": [kubectl_ssa]})
	ds := server_side_owned.decisions with input as t.make_input("imperative", "kubectl-edit", {"applyOwnedChanges": [owned]})
	some d in ds
	contains(d.message, "changes fields that kubectl apply --server-side applied")
	endswith(d.message, "fails on the conflict, or puts the applied values back with --force-conflicts. Put the change in your manifest and apply it with: kubectl apply --server-side -f <manifest>")
}

test_an_unknown_applier_is_named if {
	owned := object.union(image, {"owners": [{"manager": "my-operator", "operation": "Apply"}]})
	ds := server_side_owned.decisions with input as t.make_input("imperative", "kubectl-patch", {"applyOwnedChanges": [owned]})
	some d in ds
	endswith(d.message, "its next apply puts the applied values back (controllers apply with force). Make the change in what my-operator applies")
}

test_one_decision_per_applier if {
	owned := object.union(replicas, {"owners": [kubectl_ssa]})
	ds := server_side_owned.decisions with input as t.make_input("imperative", "kubectl-edit", {"applyOwnedChanges": [image, owned]})
	count(ds) == 2
	t.paths(ds) == {image.path, replicas.path}
}

test_a_field_last_applied_owns_is_left_to_imperative_edit if {
	la := {"path": image.path, "live": "nginx:1.14.2", "result": "nginx:1.16.1", "lastApplied": "nginx:1.14.2"}
	ds := server_side_owned.decisions with input as t.make_input("imperative", "kubectl-edit", {"imperativeChanges": [la], "applyOwnedChanges": [image]})
	count(ds) == 0
}

test_no_decision_for_applies_controllers_restarts_and_undos if {
	every class in ["client-side-apply", "server-side-apply", "controller", "rollout-restart", "rollout-undo", "save-config"] {
		count(server_side_owned.decisions) == 0 with input as t.make_input(class, "kubectl-set", {"applyOwnedChanges": [image]})
	}
}

test_nothing_without_apply_owned_changes if {
	count(server_side_owned.decisions) == 0 with input as t.make_input("imperative", "kubectl-set", {})
}

argocd := {"manager": "argocd-controller", "operation": "Apply", "time": "2024-05-01T09:00:00Z"}

test_rollout_restart_of_an_argo_cd_object_names_the_workaround if {
	ds := server_side_owned.decisions with input as t.make_input("rollout-restart", "kubectl-rollout", {"appliers": [argocd]})
	t.actions(ds) == {["server-side-owned", "warn"]}
	t.paths(ds) == {"spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]"}
	t.all_start_with_rule(ds)
	some d in ds
	endswith(d.message, concat("", [
		"with self-heal Argo CD syncs it away and the restart is undone. Restart through Argo CD with: ",
		"argocd app actions run <application> restart --kind Deployment --resource-name nginx, ",
		"or add /spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt to the Application's ignoreDifferences",
	]))
}

test_rollout_restart_of_a_flux_object_holds if {
	count(server_side_owned.decisions) == 0 with input as t.make_input("rollout-restart", "kubectl-rollout", {"appliers": [flux]})
}

test_an_edit_of_an_argo_cd_object_without_owned_changes_says_nothing if {
	count(server_side_owned.decisions) == 0 with input as t.make_input("imperative", "kubectl-edit", {"appliers": [argocd]})
}
