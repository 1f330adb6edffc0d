package applyhygiene.rules.apply_reverts_drift_test

import data.applyhygiene.rules.apply_reverts_drift
import data.applyhygiene.testing as t

# From seed 002: kubectl scale set replicas to 5; the manifest says 2.
scaled := {
	"path": "spec.replicas",
	"live": 5,
	"result": 2,
	"lastApplied": 2,
	"manifest": 2,
	"owners": [
		{"manager": "kubectl-client-side-apply", "operation": "Update", "time": "2024-05-01T09:00:00Z"},
		{"manager": "kubectl-scale", "operation": "Update", "subresource": "scale", "time": "2024-05-01T10:00:00Z"},
	],
}

test_revert_is_warned_with_who_and_when if {
	ds := apply_reverts_drift.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"reverts": [scaled]})
	t.actions(ds) == {["apply-reverts-drift", "warn"]}
	t.paths(ds) == {"spec.replicas"}
	t.all_start_with_rule(ds)
	some d in ds
	contains(d.message, "this apply sets spec.replicas back to 2, discarding 5 set by kubectl-scale at 2024-05-01T10:00:00Z")
}

test_removal_is_named if {
	gone := object.remove(scaled, ["manifest", "result"])
	ds := apply_reverts_drift.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"reverts": [gone]})
	some d in ds
	contains(d.message, "this apply removes spec.replicas,")
}

test_one_decision_per_revert if {
	other := object.union(scaled, {"path": "spec.minReadySeconds"})
	ds := apply_reverts_drift.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"reverts": [scaled, other]})
	count(ds) == 2
}

test_server_side_apply_is_not_checked if {
	ds := apply_reverts_drift.decisions with input as t.make_input("server-side-apply", "kubectl", {"reverts": [scaled]})
	count(ds) == 0
}

test_no_revert_no_decision if {
	ds := apply_reverts_drift.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {})
	count(ds) == 0
}

# With an autoscaler of the object, replicas-autoscaled names it; the
# revert of its count is not said twice. Without one, or with that rule
# off, the revert is reported.
hpa := {"name": "web", "minReplicas": 3, "maxReplicas": 10, "currentReplicas": 5, "desiredReplicas": 5}

test_replicas_an_autoscaler_scales_are_left_to_replicas_autoscaled if {
	autoscaled_in := object.union(
		t.make_input("client-side-apply", "kubectl-client-side-apply", {"reverts": [scaled]}),
		{"autoscaling": {"manifestReplicas": 2, "autoscalers": [hpa]}},
	)
	count(apply_reverts_drift.decisions) == 0 with input as autoscaled_in
	count(apply_reverts_drift.decisions) == 1 with input as autoscaled_in
		with data.applyhygiene.config as {"rules": {"replicas-autoscaled": {"action": "off"}}}
	count(apply_reverts_drift.decisions) == 1 with input as object.union(autoscaled_in, {"autoscaling": {"manifestReplicas": 2, "autoscalers": []}})
}
