package applyhygiene.rules.orphaned_field_test

import data.applyhygiene.rules.orphaned_field
import data.applyhygiene.testing as t

# From seed 003: kubectl rollout restart added restartedAt.
restarted := {
	"path": "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]",
	"live": "2022-07-26T11:44:32+08:00",
	"result": "2022-07-26T11:44:32+08:00",
	"owners": [{"manager": "kubectl-rollout", "operation": "Update", "time": "2022-07-26T03:44:32Z"}],
	"removePatch": `[{"op":"test","path":"/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt","value":"2022-07-26T11:44:32+08:00"},{"op":"remove","path":"/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt"}]`,
}

test_orphan_is_warned_with_command if {
	ds := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": [restarted]})
	t.actions(ds) == {["orphaned-field", "warn"]}
	t.paths(ds) == {restarted.path}
	t.all_start_with_rule(ds)
	some d in ds
	contains(d.message, `("2022-07-26T11:44:32+08:00", set by kubectl-rollout at 2022-07-26T03:44:32Z)`)
	endswith(d.message, sprintf("Remove it with: kubectl patch deployment/nginx -n default --type=json -p '%s'", [restarted.removePatch]))
}

test_one_decision_per_orphan if {
	env := {"path": "spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]", "live": {"name": "TO_BE_DELETED", "value": "x"}}
	ds := orphaned_field.decisions with input as t.make_input("server-side-apply", "kubectl", {"orphans": [restarted, env]})
	count(ds) == 2
	t.paths(ds) == {restarted.path, env.path}
}

test_prune_when_configured if {
	ds := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": [restarted]})
		with data.applyhygiene.config as {"rules": {"orphaned-field": {"action": "prune"}}}
	t.actions(ds) == {["orphaned-field", "prune"]}
	some d in ds
	endswith(d.message, "apply-hygiene removes it in this request.")
}

test_without_patch_suggests_edit if {
	ds := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": [object.remove(restarted, ["removePatch", "owners"])]})
	some d in ds
	contains(d.message, "set by an unknown writer")
	endswith(d.message, "Remove it with: kubectl edit deployment/nginx -n default")
}

test_edit_is_not_checked if {
	ds := orphaned_field.decisions with input as t.make_input("imperative", "kubectl-edit", {"orphans": [restarted]})
	count(ds) == 0
}

test_no_orphan_no_decision if {
	ds := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": null})
	count(ds) == 0
}
