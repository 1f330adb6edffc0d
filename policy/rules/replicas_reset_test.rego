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
	contains(d.message, "kubectl hygiene handover deployments.apps/nginx -n default spec.replicas, then apply the manifest without it.")
	d.fix == "kubectl hygiene handover deployments.apps/nginx -n default spec.replicas"
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
# warned, so its retries do not fail while an autoscaler takes over. The
# apply goes through and drops replicas from last-applied, so the
# hand-over would fail ("last-applied has no spec.replicas"): the warning
# says how to set the count back instead (found by review).
test_service_account_is_warned if {
	ds := replicas_reset.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"replicasReset": reset})
		with input.request.user as t.robot
	t.actions(ds) == {["replicas-reset", "warn"]}
	{[d.message, d.fix] | some d in ds} == {[
		"[replicas-reset] Deployment default/nginx: the manifest drops spec.replicas, which last-applied has, so this apply resets it from 5 to 1, and last-applied no longer has it: from now on kubectl apply leaves it to kubectl scale or an autoscaler. To keep 5, set it back with: kubectl scale deployments.apps/nginx -n default --replicas=5",
		"kubectl scale deployments.apps/nginx -n default --replicas=5",
	]}
}

# Every action that lets the apply through (warn, dryrun) says what can
# still be done after it, never the hand-over.
test_an_apply_let_through_never_suggests_the_handover if {
	every config in [{"action": "warn"}, {"action": "dryrun"}] {
		ds := replicas_reset.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"replicasReset": reset})
			with data.applyhygiene.config as {"rules": {"replicas-reset": config}}
		some d in ds
		not contains(d.message, "handover")
		d.fix == "kubectl scale deployments.apps/nginx -n default --replicas=5"
	}
}

# A kind without the scale subresource of the built-in kinds (a custom
# resource, whose CRD may have none) is set back with a merge patch.
test_a_custom_resource_is_set_back_with_a_patch if {
	ds := replicas_reset.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"replicasReset": object.remove(reset, ["result"])})
		with input.request.user as t.robot
		with input.request.object as {"apiVersion": "example.com/v1", "kind": "Queue", "namespace": "default", "name": "orders"}
		with input.request.resource as {"group": "example.com", "resource": "queues"}
	{[d.message, d.fix] | some d in ds} == {[
		`[replicas-reset] Queue default/orders: the manifest drops spec.replicas, which last-applied has, so this apply removes it (now 5), and last-applied no longer has it: from now on kubectl apply leaves it to kubectl scale or an autoscaler. To keep 5, set it back with: kubectl patch queues.example.com/orders -n default --type=merge -p '{"spec":{"replicas":5}}'`,
		`kubectl patch queues.example.com/orders -n default --type=merge -p '{"spec":{"replicas":5}}'`,
	]}
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

# The repair action: the mutating webhook keeps the live count and says so.
test_repair_keeps_the_live_count if {
	ds := replicas_reset.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"replicasReset": reset})
		with data.applyhygiene.config as {"rules": {"replicas-reset": {"action": "repair"}}}
	t.actions(ds) == {["replicas-reset", "repair"]}
	t.paths(ds) == {"spec.replicas"}
	t.all_start_with_rule(ds)
	{d.message | some d in ds} == {"[replicas-reset] Deployment default/nginx: the manifest drops spec.replicas, which last-applied has; apply-hygiene keeps its live value 5 in this request, and last-applied no longer has it, so from now on kubectl apply leaves it to kubectl scale or an autoscaler."}
}

# repair for people leaves service accounts at their own default (warn)
# unless configured too.
test_repair_for_service_accounts_is_configured_apart if {
	ds := replicas_reset.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"replicasReset": reset})
		with input.request.user as t.robot
		with data.applyhygiene.config as {"rules": {"replicas-reset": {"action": "repair"}}}
	t.actions(ds) == {["replicas-reset", "warn"]}
	ds_repair := replicas_reset.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"replicasReset": reset})
		with input.request.user as t.robot
		with data.applyhygiene.config as {"rules": {"replicas-reset": {"action": "repair", "serviceAccountAction": "repair"}}}
	t.actions(ds_repair) == {["replicas-reset", "repair"]}
}

# A namespace in dryrun mode only records the finding: nothing is kept.
test_repair_in_a_dryrun_namespace_is_dryrun if {
	ds := replicas_reset.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"replicasReset": reset})
		with input.namespace.labels as {"apply-hygiene.io/enforcement": "dryrun"}
		with data.applyhygiene.config as {"rules": {"replicas-reset": {"action": "repair"}}}
	t.actions(ds) == {["replicas-reset", "dryrun"]}
}

# The repair's remedy is merge's setPatch, which sets spec.replicas back to
# the live count (creating spec when the object after the apply has none);
# without one there is no patch, and a denial carries none.
test_repair_patch_sets_the_live_count if {
	fact := object.union(reset, {"setPatch": `[{"op":"add","path":"/spec/replicas","value":5}]`})
	ds := replicas_reset.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"replicasReset": fact})
		with data.applyhygiene.config as {"rules": {"replicas-reset": {"action": "repair"}}}
	some d in ds
	d.patch == [{"op": "add", "path": "/spec/replicas", "value": 5}]
}

test_repair_patch_creates_spec if {
	fact := object.union(reset, {"setPatch": `[{"op":"add","path":"/spec","value":{"replicas":5}}]`})
	ds := replicas_reset.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"replicasReset": fact})
		with data.applyhygiene.config as {"rules": {"replicas-reset": {"action": "repair"}}}
	some d in ds
	d.patch == [{"op": "add", "path": "/spec", "value": {"replicas": 5}}]
}

test_repair_without_a_set_patch_carries_none if {
	ds := replicas_reset.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"replicasReset": reset})
		with data.applyhygiene.config as {"rules": {"replicas-reset": {"action": "repair"}}}
	some d in ds
	d.action == "repair"
	not "patch" in object.keys(d)
}

test_denial_carries_no_patch if {
	ds := replicas_reset.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"replicasReset": reset})
	some d in ds
	not "patch" in object.keys(d)
}
