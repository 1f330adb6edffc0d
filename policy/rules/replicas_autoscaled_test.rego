package applyhygiene.rules.replicas_autoscaled_test

import data.applyhygiene.rules.replicas_autoscaled
import data.applyhygiene.testing as t

web := {"name": "web", "minReplicas": 2, "maxReplicas": 10, "currentReplicas": 3, "desiredReplicas": 5}

autoscaled := {"manifestReplicas": 3, "autoscalers": [web]}

apply_input(classification, manager) := object.union(t.make_input(classification, manager, {}), {"autoscaling": autoscaled})

want_message := "[replicas-autoscaled] Deployment default/nginx: the manifest sets spec.replicas to 3, but HorizontalPodAutoscaler web scales this Deployment (it wants 5 replicas now, between 2 and 10), so every apply fights the autoscaler: it sets the count back to 3 and the autoscaler scales it again. Drop replicas from the manifest to leave them to the autoscaler; that apply is replicas-reset's hand-over (its repair action keeps the live count)."

test_client_side_apply_setting_replicas_is_warned if {
	ds := replicas_autoscaled.decisions with input as apply_input("client-side-apply", "kubectl-client-side-apply")
	t.actions(ds) == {["replicas-autoscaled", "warn"]}
	t.paths(ds) == {"spec.replicas"}
	t.all_start_with_rule(ds)
	{d.message | some d in ds} == {want_message}
}

test_server_side_apply_setting_replicas_is_warned if {
	ds := replicas_autoscaled.decisions with input as apply_input("server-side-apply", "kustomize-controller")
	{d.message | some d in ds} == {want_message}
}

test_deny_is_configurable if {
	ds := replicas_autoscaled.decisions with input as apply_input("client-side-apply", "kubectl-client-side-apply")
		with data.applyhygiene.config as {"rules": {"replicas-autoscaled": {"action": "deny"}}}
	t.actions(ds) == {["replicas-autoscaled", "deny"]}
}

test_manifest_without_replicas_is_fine if {
	ds := replicas_autoscaled.decisions with input as apply_input("client-side-apply", "kubectl-client-side-apply")
		with input.autoscaling as {"autoscalers": [web]}
	count(ds) == 0
}

test_without_autoscaler_is_fine if {
	ds := replicas_autoscaled.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {})
	count(ds) == 0
	ds_empty := replicas_autoscaled.decisions with input as apply_input("client-side-apply", "kubectl-client-side-apply")
		with input.autoscaling as {"manifestReplicas": 3, "autoscalers": []}
	count(ds_empty) == 0
}

# Only applies set the manifest's count: an edit, a scale or a controller's
# write is none of this rule's business, whatever the input says.
test_other_writes_are_not_checked if {
	every class in ["imperative", "scale", "save-config", "rollout-undo", "rollout-restart", "controller"] {
		count(replicas_autoscaled.decisions) == 0 with input as apply_input(class, "kubectl-edit")
	}
}

test_no_desired_count_yet if {
	ds := replicas_autoscaled.decisions with input as apply_input("client-side-apply", "kubectl-client-side-apply")
		with input.autoscaling.autoscalers as [object.union(web, {"desiredReplicas": 0, "currentReplicas": 0})]
	some d in ds
	contains(d.message, "scales this Deployment (it has computed no desired count yet, between 2 and 10)")
}

test_one_decision_per_autoscaler if {
	other := object.union(web, {"name": "web-2", "desiredReplicas": 4})
	ds := replicas_autoscaled.decisions with input as apply_input("client-side-apply", "kubectl-client-side-apply")
		with input.autoscaling.autoscalers as [web, other]
	count(ds) == 2
	some d in ds
	contains(d.message, "HorizontalPodAutoscaler web-2 scales this Deployment (it wants 4 replicas now")
}
