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
