package applyhygiene.lib_test

import data.applyhygiene
import data.applyhygiene.lib
import data.applyhygiene.testing as t

image := {
	"path": "spec.template.spec.containers[name=nginx].image",
	"live": "nginx:1.14.2",
	"result": "nginx:1.16.1",
	"lastApplied": "nginx:1.14.2",
}

restarted := {
	"path": "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]",
	"live": "2022-07-26T11:44:32+08:00",
	"result": "2022-07-26T11:44:32+08:00",
	"owners": [{"manager": "kubectl-rollout", "operation": "Update", "time": "2022-07-26T03:44:32Z"}],
}

edit := t.make_input("imperative", "kubectl-edit", {"imperativeChanges": [image]})

orphan := t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": [restarted]})

test_defaults_apply_without_config if {
	lib.config.rules["imperative-edit"].action == "deny"
	lib.config.namespaceLabel == "apply-hygiene.io/enforcement"
}

test_config_merges_over_defaults if {
	c := lib.config with data.applyhygiene.config as {"rules": {"orphaned-field": {"action": "prune"}}}
	c.rules["orphaned-field"].action == "prune"
	c.rules["imperative-edit"].serviceAccountAction == "warn"
}

test_decisions_gather_every_rule if {
	ds := applyhygiene.decisions with input as edit
	t.actions(ds) == {["imperative-edit", "deny"]}
}

test_break_glass_group_is_warned if {
	ds := applyhygiene.decisions with input as edit
		with input.request.user.groups as ["system:authenticated", "sre-oncall"]
		with data.applyhygiene.config as {"breakGlassGroups": ["sre-oncall"]}
	t.actions(ds) == {["imperative-edit", "warn"]}
}

test_break_glass_wins_over_service_account if {
	ds := applyhygiene.decisions with input as edit
		with input.request.user as t.robot
		with data.applyhygiene.config as {
			"breakGlassGroups": ["system:serviceaccounts:ci"],
			"rules": {"imperative-edit": {"breakGlassAction": "dryrun", "serviceAccountAction": "deny"}},
		}
	t.actions(ds) == {["imperative-edit", "dryrun"]}
}

test_other_groups_are_not_break_glass if {
	ds := applyhygiene.decisions with input as edit
		with data.applyhygiene.config as {"breakGlassGroups": ["sre-oncall"]}
	t.actions(ds) == {["imperative-edit", "deny"]}
}

test_exempt_user if {
	ds := applyhygiene.decisions with input as edit
		with data.applyhygiene.config as {"exemptions": {"users": ["alice"]}}
	count(ds) == 0
}

test_exempt_group if {
	ds := applyhygiene.decisions with input as edit
		with data.applyhygiene.config as {"exemptions": {"groups": ["system:authenticated"]}}
	count(ds) == 0
}

test_exempt_service_account if {
	ds := applyhygiene.decisions with input as edit
		with input.request.user as t.robot
		with data.applyhygiene.config as {"exemptions": {"serviceAccounts": ["ci/deployer"]}}
	count(ds) == 0
}

test_exempt_service_accounts_of_namespace if {
	ds := applyhygiene.decisions with input as edit
		with input.request.user as t.robot
		with data.applyhygiene.config as {"exemptions": {"serviceAccounts": ["ci/*"]}}
	count(ds) == 0
}

test_other_service_account_is_not_exempt if {
	ds := applyhygiene.decisions with input as edit
		with input.request.user as t.robot
		with data.applyhygiene.config as {"exemptions": {"serviceAccounts": ["ci/other", "prod/*"]}}
	t.actions(ds) == {["imperative-edit", "warn"]}
}

# An object first applied with kubectl and later adopted by Helm: Helm's
# upgrade (field manager helm) changes fields that last-applied owns.
test_exempt_field_manager if {
	ds := applyhygiene.decisions with input as edit
		with input.request.fieldManager as "helm"
		with data.applyhygiene.config as {"exemptions": {"fieldManagers": ["Terraform", "helm"]}}
	count(ds) == 0
}

test_exempt_field_manager_covers_every_rule if {
	ds := applyhygiene.decisions with input as orphan
		with input.request.fieldManager as "ci-deployer"
		with data.applyhygiene.config as {"exemptions": {"fieldManagers": ["ci-deployer"]}}
	count(ds) == 0
}

test_field_manager_names_are_exact if {
	ds := applyhygiene.decisions with input as edit
		with input.request.fieldManager as "Helm"
		with data.applyhygiene.config as {"exemptions": {"fieldManagers": ["helm"]}}
	t.actions(ds) == {["imperative-edit", "deny"]}
}

# A write that sends no field manager (kubectl rollout undo, an old client)
# is not exempted by an empty name.
test_no_field_manager_is_never_exempt if {
	ds := applyhygiene.decisions with input as edit
		with input.request.fieldManager as ""
		with data.applyhygiene.config as {"exemptions": {"fieldManagers": [""]}}
	t.actions(ds) == {["imperative-edit", "deny"]}
}

test_default_exempts_no_field_manager if {
	lib.config.exemptions.fieldManagers == []
}

test_namespace_warn_turns_deny_into_warn if {
	ds := applyhygiene.decisions with input as edit
		with input.namespace.labels as {"apply-hygiene.io/enforcement": "warn"}
	t.actions(ds) == {["imperative-edit", "warn"]}
}

test_namespace_warn_keeps_prune if {
	ds := applyhygiene.decisions with input as orphan
		with input.namespace.labels as {"apply-hygiene.io/enforcement": "warn"}
		with data.applyhygiene.config as {"rules": {"orphaned-field": {"action": "prune"}}}
	t.actions(ds) == {["orphaned-field", "prune"]}
}

test_namespace_dryrun_makes_everything_dryrun if {
	both := object.union(edit, {"analysis": {"orphans": [restarted]}, "classification": "client-side-apply"})
	ds := applyhygiene.decisions with input as object.union(edit, {"namespace": {"labels": {"apply-hygiene.io/enforcement": "dryrun"}}})
	t.actions(ds) == {["imperative-edit", "dryrun"]}
	ds2 := applyhygiene.decisions with input as both
		with input.namespace.labels as {"apply-hygiene.io/enforcement": "dryrun"}
		with data.applyhygiene.config as {"rules": {"orphaned-field": {"action": "prune"}}}
	t.actions(ds2) == {["orphaned-field", "dryrun"]}
}

test_namespace_off_disables_every_rule if {
	ds := applyhygiene.decisions with input as edit
		with input.namespace.labels as {"apply-hygiene.io/enforcement": "off"}
	count(ds) == 0
}

test_custom_namespace_label if {
	ds := applyhygiene.decisions with input as edit
		with input.namespace.labels as {"hygiene": "off"}
		with data.applyhygiene.config as {"namespaceLabel": "hygiene"}
	count(ds) == 0
}

test_rule_off if {
	ds := applyhygiene.decisions with input as edit
		with data.applyhygiene.config as {"rules": {"imperative-edit": {"action": "off"}}}
	count(ds) == 0
}

test_rule_off_stays_off_in_dryrun_namespace if {
	ds := applyhygiene.decisions with input as edit
		with input.namespace.labels as {"apply-hygiene.io/enforcement": "dryrun"}
		with data.applyhygiene.config as {"rules": {"imperative-edit": {"action": "off"}}}
	count(ds) == 0
}

test_custom_decision_uses_fallback if {
	d := lib.decision_or("my-rule", "deny", "[my-rule] m", []) with input as edit
	d == {"rule": "my-rule", "action": "deny", "message": "[my-rule] m", "paths": []}
}

test_custom_decision_honours_config if {
	d := lib.decision_or("my-rule", "deny", "[my-rule] m", []) with input as edit
		with data.applyhygiene.config as {"rules": {"my-rule": {"action": "warn"}}}
	d.action == "warn"
}

test_custom_decision_off_is_undefined if {
	not lib.decision_or("my-rule", "deny", "m", []) with input as edit
		with data.applyhygiene.config as {"rules": {"my-rule": {"action": "off"}}}
}

test_cluster_scoped_object if {
	lib.describe == "Namespace team-a" with input.request.object as {"kind": "Namespace", "name": "team-a"}
	lib.target == "namespace/team-a" with input.request.object as {"kind": "Namespace", "name": "team-a", "namespace": ""}
}

test_who_skips_apply_managers if {
	fact := {"owners": [
		{"manager": "kubectl-client-side-apply", "operation": "Update", "time": "2024-05-02T00:00:00Z"},
		{"manager": "kubectl-scale", "operation": "Update", "subresource": "scale", "time": "2024-05-01T10:00:00Z"},
	]}
	lib.who(fact) == "kubectl-scale at 2024-05-01T10:00:00Z" with input as orphan
	lib.who({"owners": [{"manager": "hpa"}]}) == "hpa" with input as orphan
	lib.who({}) == "an unknown writer" with input as orphan
}

test_shell_quote if {
	lib.shell_quote(`[{"value":"it's"}]`) == `'[{"value":"it'\''s"}]'`
}

test_show if {
	lib.show({"live": {"a": 1}}, "live") == `{"a":1}`
	lib.show({"live": false}, "live") == "false"
	lib.show({}, "live") == "(absent)"
}

test_show_does_not_escape_html if {
	lib.show({"live": "<redacted>"}, "live") == `"<redacted>"`
	lib.show({"live": "a && b"}, "live") == `"a && b"`
}

test_analysis_is_the_input_analysis if {
	written := t.make_input("client-side-apply", "kubectl-client-side-apply", {})
	lib.analysis == written.analysis with input as written
}

test_analysis_is_empty_without_one if {
	lib.analysis == {} with input as object.remove(t.make_input("controller", "deployment-controller", {}), {"analysis"})
}

# The hand-over command names the object as RESOURCE.GROUP/NAME (a kind
# of the same name in another group, a CRD's Deployment, cannot take it),
# puts -n before the paths, names every path, quotes those the shell would
# read as a pattern, and has no -n for a cluster-scoped object.
test_handover_names_the_paths_as_shell_words if {
	lib.handover(["spec.replicas", image.path]) == "kubectl hygiene handover deployments.apps/nginx -n default spec.replicas 'spec.template.spec.containers[name=nginx].image'" with input as edit
	lib.handover(["metadata.labels[it's]"]) == `kubectl hygiene handover deployments.apps/nginx -n default 'metadata.labels[it'\''s]'` with input as edit
	cluster_role := json.patch(edit, [
		{"op": "replace", "path": "/request/object", "value": {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "namespace": "", "name": "reader"}},
		{"op": "replace", "path": "/request/resource", "value": {"group": "rbac.authorization.k8s.io", "resource": "clusterroles"}},
	])
	lib.handover(["rules"]) == "kubectl hygiene handover clusterroles.rbac.authorization.k8s.io/reader rules" with input as cluster_role
	system_role := json.patch(cluster_role, [{"op": "replace", "path": "/request/object/name", "value": "system:aggregate-to-edit"}])
	lib.handover(["rules"]) == "kubectl hygiene handover clusterroles.rbac.authorization.k8s.io/system:aggregate-to-edit rules" with input as system_role
	lib.explain == "kubectl hygiene explain clusterroles.rbac.authorization.k8s.io/system:aggregate-to-edit" with input as system_role
}

# The core group has no suffix; a kind of another group is told apart by
# its group, from the request's resource.
test_handover_names_the_resource_and_its_group if {
	config_map := json.patch(edit, [
		{"op": "replace", "path": "/request/object", "value": {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default", "name": "settings"}},
		{"op": "replace", "path": "/request/resource", "value": {"group": "", "resource": "configmaps"}},
	])
	lib.handover(["data.a"]) == "kubectl hygiene handover configmaps/settings -n default data.a" with input as config_map
	custom := json.patch(edit, [
		{"op": "replace", "path": "/request/object", "value": {"apiVersion": "example.com/v1", "kind": "Deployment", "namespace": "default", "name": "nginx"}},
		{"op": "replace", "path": "/request/resource", "value": {"group": "example.com", "resource": "deployments"}},
	])
	lib.handover(["spec.replicas"]) == "kubectl hygiene handover deployments.example.com/nginx -n default spec.replicas" with input as custom
	lib.target == "deployments.example.com/nginx -n default" with input as custom
}

# Without the request's resource (a user policy's test input), the
# command names the kind and the group of apiVersion, which kubectl
# resolves too.
test_handover_without_a_resource_names_the_kind_and_group if {
	lib.handover(["spec.replicas"]) == "kubectl hygiene handover deployment.apps/nginx -n default spec.replicas" with input as json.remove(edit, ["request/resource"])
	core := json.patch(json.remove(edit, ["request/resource"]), [{"op": "replace", "path": "/request/object", "value": {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default", "name": "settings"}}])
	lib.handover(["data.a"]) == "kubectl hygiene handover configmap/settings -n default data.a" with input as core
}

# At most max_listed paths, so that the command stays whole in a warning
# cut at 1024 bytes; handover_more says how many it leaves out.
test_handover_names_at_most_max_listed_paths if {
	paths := [sprintf("data.k%d", [i]) | some i in numbers.range(1, 8)]
	lib.handover(paths) == "kubectl hygiene handover deployments.apps/nginx -n default data.k1 data.k2 data.k3 data.k4 data.k5" with input as edit
	lib.handover_more(paths) == " (it names the first 5 of the 8 fields; hand the 3 others over the same way)"
	lib.handover_more(array.slice(paths, 0, 5)) == ""
}

# An object's name is one shell word too: an RBAC object's name may hold
# ; $ ( and spaces, and a pasted command must never run them (found by
# review: a ClusterRole named "reader;touch pwned;x").
test_handover_quotes_the_object_name if {
	hostile := json.patch(edit, [
		{"op": "replace", "path": "/request/object", "value": {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "namespace": "team-a", "name": "$(id>&2)"}},
		{"op": "replace", "path": "/request/resource", "value": {"group": "rbac.authorization.k8s.io", "resource": "roles"}},
	])
	lib.handover(["rules"]) == `kubectl hygiene handover 'roles.rbac.authorization.k8s.io/$(id>&2)' -n team-a rules` with input as hostile
	lib.explain == `kubectl hygiene explain 'roles.rbac.authorization.k8s.io/$(id>&2)' -n team-a` with input as hostile
	cluster_role := json.patch(edit, [
		{"op": "replace", "path": "/request/object", "value": {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "namespace": "", "name": "reader;touch pwned;x"}},
		{"op": "replace", "path": "/request/resource", "value": {"group": "rbac.authorization.k8s.io", "resource": "clusterroles"}},
	])
	lib.handover(["rules"]) == `kubectl hygiene handover 'clusterroles.rbac.authorization.k8s.io/reader;touch pwned;x' rules` with input as cluster_role
}

# remove(f) removes the field at its pointer, then each field that must go
# with it (removedWith); nothing without a pointer.
test_remove_takes_the_fields_removed_with_it if {
	lib.remove({"pointer": "/spec/serviceAccountName", "removedWith": ["/spec/serviceAccount"]}) == [
		{"op": "remove", "path": "/spec/serviceAccountName"},
		{"op": "remove", "path": "/spec/serviceAccount"},
	]
	lib.remove({"pointer": "/metadata/labels/debug"}) == [{"op": "remove", "path": "/metadata/labels/debug"}]
	lib.remove({"removedWith": ["/spec/serviceAccount"]}) == []
}
