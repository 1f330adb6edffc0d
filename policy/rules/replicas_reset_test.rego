package applyhygiene.rules.replicas_reset_test

import data.applyhygiene.rules.replicas_reset
import data.applyhygiene.testing as t

# From seed 001/002: a scaled Deployment whose manifest drops replicas.
reset := {"path": "spec.replicas", "live": 5, "result": 1, "lastApplied": 2}

test_reset_of_scaled_object_is_denied if {
	ds := replicas_reset.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"replicasReset": reset})
	t.actions(ds) == {["replicas-reset", "deny"]}
	t.paths(ds) == {"spec.replicas"}
	t.all_start_with_rule(ds)
	some d in ds
	contains(d.message, "resets it from 5 to 1")
	contains(d.message, "kubectl apply edit-last-applied deployment/nginx -n default, then apply the manifest without it.")
}

test_reset_from_one_is_fine if {
	ds := replicas_reset.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"replicasReset": object.union(reset, {"live": 1})})
	count(ds) == 0
}

test_unknown_live_is_fine if {
	ds := replicas_reset.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"replicasReset": object.remove(reset, ["live"])})
	count(ds) == 0
}

test_server_side_apply_is_not_checked if {
	ds := replicas_reset.decisions with input as t.make_input("server-side-apply", "kubectl", {"replicasReset": reset})
	count(ds) == 0
}

# A GitOps controller syncing with client-side apply is a service account:
# warned, so its retries do not fail while an autoscaler takes over.
test_service_account_is_warned if {
	ds := replicas_reset.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"replicasReset": reset})
		with input.request.user as t.robot
	t.actions(ds) == {["replicas-reset", "warn"]}
}

test_service_account_action_is_configurable if {
	ds := replicas_reset.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"replicasReset": reset})
		with input.request.user as t.robot
		with data.applyhygiene.config as {"rules": {"replicas-reset": {"serviceAccountAction": "deny"}}}
	t.actions(ds) == {["replicas-reset", "deny"]}
}

# The message names the value the object gets, not a fixed 1.
test_reset_names_the_result_value if {
	ds := replicas_reset.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"replicasReset": object.union(reset, {"result": 3})})
	some d in ds
	contains(d.message, "so this apply resets it from 5 to 3.")
}

# A kind whose replicas have no server default (a custom resource): the
# object after the apply has no value, so the field is removed, not reset
# to 1.
test_reset_without_result_says_removed if {
	ds := replicas_reset.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"replicasReset": object.remove(reset, ["result"])})
	t.actions(ds) == {["replicas-reset", "deny"]}
	t.all_start_with_rule(ds)
	some d in ds
	contains(d.message, "which last-applied has, so this apply removes it (now 5). To hand replicas over")
	not contains(d.message, "to 1")
}
