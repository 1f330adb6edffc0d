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
	endswith(d.message, sprintf("Remove it with: kubectl patch deployments.apps/nginx -n default --type=json -p '%s'", [restarted.removePatch]))
}

test_one_decision_per_orphan if {
	env := {"path": "spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]", "live": {"name": "TO_BE_DELETED", "value": "x"}}
	ds := orphaned_field.decisions with input as t.make_input("server-side-apply", "kubectl", {"orphans": [restarted, env]})
	count(ds) == 2
	t.paths(ds) == {restarted.path, env.path}
}

# A label set by kubectl label: outside the pod template, removing it
# rolls nothing.
debug_label := {
	"path": "metadata.labels[debug]",
	"live": "true",
	"owners": [{"manager": "kubectl-label", "operation": "Update", "time": "2024-05-01T10:00:00Z"}],
	"removePatch": `[{"op":"test","path":"/metadata/labels/debug","value":"true"},{"op":"remove","path":"/metadata/labels/debug"}]`,
}

test_prune_when_configured if {
	label := object.union(debug_label, {"pointer": "/metadata/labels/debug"})
	ds := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": [label]})
		with data.applyhygiene.config as {"rules": {"orphaned-field": {"action": "prune"}}}
	t.actions(ds) == {["orphaned-field", "prune"]}
	some d in ds
	endswith(d.message, "so kubectl apply will never remove it. apply-hygiene removes it in this request.")
}

# Removing a field of the pod template changes the template: the
# Deployment starts a new rollout and replaces every pod.
test_template_orphan_says_removing_it_rolls_the_pods if {
	ds := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": [restarted]})
	t.all_start_with_rule(ds)
	some d in ds
	contains(d.message, "so kubectl apply will never remove it. Removing it changes the pod template, so it rolls the pods (a new rollout starts). Remove it with: kubectl patch deployments.apps/nginx -n default --type=json -p '")
}

test_prune_of_template_orphan_says_this_apply_rolls_the_pods if {
	annotation := object.union(restarted, {"pointer": "/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt"})
	ds := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": [annotation]})
		with data.applyhygiene.config as {"rules": {"orphaned-field": {"action": "prune"}}}
	t.actions(ds) == {["orphaned-field", "prune"]}
	t.all_start_with_rule(ds)
	some d in ds
	endswith(d.message, "so kubectl apply will never remove it. apply-hygiene removes it in this request. This apply therefore changes the pod template, so it rolls the pods (a new rollout starts).")
}

test_orphan_outside_template_rolls_nothing if {
	ds := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": [debug_label]})
	some d in ds
	contains(d.message, sprintf("so kubectl apply will never remove it. Remove it with: kubectl patch deployments.apps/nginx -n default --type=json -p '%s'", [debug_label.removePatch]))
	not contains(d.message, "roll")
}

# A CronJob's job template shapes the Jobs it creates next; no pod is
# replaced.
test_job_template_orphan_changes_the_next_jobs if {
	env := {"path": "spec.jobTemplate.spec.template.spec.containers[name=backup].env[name=DEBUG]", "live": {"name": "DEBUG", "value": "1"}}
	ds := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": [env]})
		with input.request.object as {"apiVersion": "batch/v1", "kind": "CronJob", "namespace": "default", "name": "backup"}
		with input.request.resource as {"group": "batch", "resource": "cronjobs"}
	some d in ds
	startswith(d.message, "[orphaned-field] CronJob default/backup: spec.jobTemplate.spec.template.spec.containers[name=backup].env[name=DEBUG] (")
	endswith(d.message, "so kubectl apply will never remove it. Removing it changes the pod template of the Jobs that the CronJob creates from then on (running Jobs keep theirs). Remove it with: kubectl edit cronjobs.batch/backup -n default")
}

# A Job's or a ReplicaSet's template shapes the pods it creates next; no
# rollout replaces the running ones.
test_template_orphan_of_a_kind_without_rollout_changes_the_next_pods if {
	label := {"path": "spec.template.metadata.labels.debug", "live": "1"}
	every ref in [
		{"apiVersion": "batch/v1", "kind": "Job", "namespace": "default", "name": "migrate", "resource": "jobs.batch"},
		{"apiVersion": "apps/v1", "kind": "ReplicaSet", "namespace": "default", "name": "migrate", "resource": "replicasets.apps"},
	] {
		[resource, group] := split(ref.resource, ".")
		ds := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": [label]})
			with input.request.object as object.remove(ref, ["resource"])
			with input.request.resource as {"group": group, "resource": resource}
		some d in ds
		endswith(d.message, sprintf("so kubectl apply will never remove it. Removing it changes the pod template of the pods that the %s creates from then on (running pods keep theirs). Remove it with: kubectl edit %s/migrate -n default", [ref.kind, ref.resource]))
	}
}

# A path that only starts like a pod template's is not inside one.
test_template_prefix_is_a_whole_field if {
	tpl := {"path": "spec.templateGeneration", "live": 3, "removePatch": ""}
	ds := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": [tpl]})
	some d in ds
	endswith(d.message, "so kubectl apply will never remove it. Remove it with: kubectl edit deployments.apps/nginx -n default")
}

test_without_patch_suggests_edit if {
	ds := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": [object.remove(restarted, ["removePatch", "owners"])]})
	some d in ds
	contains(d.message, "set by an unknown writer")
	endswith(d.message, "Remove it with: kubectl edit deployments.apps/nginx -n default")
}

test_edit_is_not_checked if {
	ds := orphaned_field.decisions with input as t.make_input("imperative", "kubectl-edit", {"orphans": [restarted]})
	count(ds) == 0
}

test_no_orphan_no_decision if {
	ds := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": null})
	count(ds) == 0
}

# The prune's remedy removes the orphan at its pointer; a warning carries
# none.
test_prune_carries_the_remove_patch if {
	label := object.union(debug_label, {"pointer": "/metadata/labels/debug"})
	ds := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": [label]})
		with data.applyhygiene.config as {"rules": {"orphaned-field": {"action": "prune"}}}
	some d in ds
	d.patch == [{"op": "remove", "path": "/metadata/labels/debug"}]
}

test_prune_of_an_orphan_already_gone_changes_nothing if {
	ds := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": [debug_label]})
		with data.applyhygiene.config as {"rules": {"orphaned-field": {"action": "prune"}}}
	some d in ds
	d.patch == []
}

test_warning_carries_no_patch if {
	label := object.union(debug_label, {"pointer": "/metadata/labels/debug"})
	ds := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": [label]})
	some d in ds
	not "patch" in object.keys(d)
}

# A serviceAccountName set by kubectl set serviceaccount: the API server
# copies it into the deprecated serviceAccount, and fills an empty name
# from that alias, so merge names the alias in removedWith and the prune
# removes it after the field, or the name would come back.
service_account := {
	"path": "spec.template.spec.serviceAccountName",
	"live": "builder",
	"result": "builder",
	"owners": [{"manager": "kubectl-set", "operation": "Update", "time": "2026-11-02T00:00:00Z"}],
	"pointer": "/spec/template/spec/serviceAccountName",
	"removedWith": ["/spec/template/spec/serviceAccount"],
}

test_prune_removes_the_alias_with_the_field if {
	ds := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": [service_account]})
		with data.applyhygiene.config as {"rules": {"orphaned-field": {"action": "prune"}}}
	some d in ds
	d.patch == [
		{"op": "remove", "path": "/spec/template/spec/serviceAccountName"},
		{"op": "remove", "path": "/spec/template/spec/serviceAccount"},
	]
	contains(d.message, "apply-hygiene removes it in this request.")
}

# An orphan that merge gives no pointer (its alias names another service
# account, which the server would take instead) is not pruned, and the
# message does not say it is: it says how to remove it.
test_prune_without_a_remedy_claims_nothing if {
	kept := object.remove(service_account, ["pointer", "removedWith"])
	ds := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": [kept]})
		with data.applyhygiene.config as {"rules": {"orphaned-field": {"action": "prune"}}}
	some d in ds
	d.patch == []
	not contains(d.message, "apply-hygiene removes it")
	endswith(d.message, "Remove it with: kubectl edit deployments.apps/nginx -n default")
	d.fix == "kubectl edit deployments.apps/nginx -n default"
}

# A field whose removal the API server refuses while the object exists
# (merge's frozen: a Pod's spec, a Job's pod template) gets no command
# and no patch, in admission as in the audit: the message says that it
# goes only with the object.
test_a_frozen_orphan_gets_no_command if {
	frozen := object.union(object.remove(service_account, ["pointer", "removedWith", "removePatch"]), {"frozen": true})
	every a in ["warn", "prune"] {
		ds := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"orphans": [frozen]})
			with data.applyhygiene.config as {"rules": {"orphaned-field": {"action": a}}}
		count(ds) == 1
		every d in ds {
			object.get(d, "patch", []) == []
			d.fix == ""
			endswith(d.message, "is in neither your manifest nor last-applied, so kubectl apply will never remove it. The API server refuses its removal while the object exists: it goes only when the object is created again from your manifest.")
		}
	}
}

# kubectl apply edit-last-applied took the label team out of last-applied:
# the mutating pass records the hand-over, with the record merge built.
handover := {"value": `["metadata.labels.team"]`, "paths": ["metadata.labels.team"], "fits": true}

test_handover_through_last_applied_is_recorded if {
	ds := orphaned_field.decisions with input as t.make_input("save-config", "kubectl-client-side-apply", {"handOver": handover})
	t.actions(ds) == {["orphaned-field", "repair"]}
	t.paths(ds) == {"metadata.annotations[apply-hygiene.io/handed-over]"}
	some d in ds
	d.patch == [{"op": "add", "path": "/metadata/annotations/apply-hygiene.io~1handed-over", "value": `["metadata.labels.team"]`}]
	d.quiet == true
	d.message == "[orphaned-field] Deployment default/nginx: this write took metadata.labels.team out of last-applied, which hands it over from kubectl apply to its next writer; apply-hygiene recorded the hand-over in the annotation apply-hygiene.io/handed-over, so that a person's later writes of it are not reported as orphans. Check with: kubectl hygiene explain deployments.apps/nginx -n default"
}

test_handover_of_many_fields_counts_them if {
	paths := ["metadata.labels.a", "metadata.labels.b", "metadata.labels.c", "metadata.labels.d"]
	ds := orphaned_field.decisions with input as t.make_input("save-config", "kubectl-client-side-apply", {"handOver": {"value": "[]", "paths": paths, "fits": true}})
	some d in ds
	contains(d.message, "this write took 4 fields out of last-applied, which hands them over")
}

# Whatever the rule's action, but not in dryrun, nor off; never when the
# record would not fit, nor for another kind of write.
test_handover_record_follows_the_rule if {
	every a in ["warn", "prune", "deny"] {
		ds := orphaned_field.decisions with input as t.make_input("save-config", "kubectl-client-side-apply", {"handOver": handover})
			with data.applyhygiene.config as {"rules": {"orphaned-field": {"action": a}}}
		t.actions(ds) == {["orphaned-field", "repair"]}
	}
	every a in ["dryrun", "off"] {
		ds := orphaned_field.decisions with input as t.make_input("save-config", "kubectl-client-side-apply", {"handOver": handover})
			with data.applyhygiene.config as {"rules": {"orphaned-field": {"action": a}}}
		count(ds) == 0
	}
	too_large := orphaned_field.decisions with input as t.make_input("save-config", "kubectl-client-side-apply", {"handOver": object.union(handover, {"fits": false})})
	count(too_large) == 0
	not_save_config := orphaned_field.decisions with input as t.make_input("imperative", "kubectl-edit", {"handOver": handover})
	count(not_save_config) == 0
}

test_handover_in_a_dry_run_says_nothing_is_stored if {
	dry := object.union(t.make_input("save-config", "kubectl-client-side-apply", {"handOver": handover}), {"request": {"dryRun": true}})
	ds := orphaned_field.decisions with input as dry
	some d in ds
	contains(d.message, "apply-hygiene would record (this is a dry run: nothing is stored) the hand-over in the annotation apply-hygiene.io/handed-over")
}

test_handover_of_long_paths_counts_them if {
	long := concat("", ["metadata.annotations[", concat("", ["a" | some i in numbers.range(1, 90)]), "]"])
	paths := [concat("", [long, "1"]), concat("", [long, "2"]), concat("", [long, "3"])]
	ds := orphaned_field.decisions with input as t.make_input("save-config", "kubectl-client-side-apply", {"handOver": {"value": "[]", "paths": paths, "fits": true}})
	some d in ds
	contains(d.message, "this write took 3 fields out of last-applied")
}

# A server-side apply whose applier owned the annotations map dropped it,
# the record of the label team's hand-over with it: the mutating pass
# writes the record back as it was, the whole map when none is left.
dropped := {"value": `["metadata.labels.team"]`, "paths": ["metadata.labels.team"], "fits": true}

test_a_record_an_apply_dropped_is_put_back if {
	every class in ["client-side-apply", "server-side-apply", "save-config"] {
		ds := orphaned_field.decisions with input as t.make_input(class, "platform", {"droppedRecord": dropped})
		t.actions(ds) == {["orphaned-field", "repair"]}
		t.paths(ds) == {"metadata.annotations[apply-hygiene.io/handed-over]"}
		some d in ds
		d.patch == [{"op": "add", "path": "/metadata/annotations/apply-hygiene.io~1handed-over", "value": `["metadata.labels.team"]`}]
		d.quiet == true
		d.message == "[orphaned-field] Deployment default/nginx: this apply dropped the annotation apply-hygiene.io/handed-over, apply-hygiene's record of metadata.labels.team handed over from kubectl apply; apply-hygiene put it back, so that a person's writes of it are not reported as orphans. Check with: kubectl hygiene explain deployments.apps/nginx -n default"
	}
	bare := orphaned_field.decisions with input as t.make_input("server-side-apply", "platform", {"droppedRecord": object.union(dropped, {"noAnnotations": true})})
	some d in bare
	d.patch == [{"op": "add", "path": "/metadata/annotations", "value": {"apply-hygiene.io/handed-over": `["metadata.labels.team"]`}}]
}

# Whatever the rule's action, but not in dryrun, nor off; never when the
# record would not fit, nor for a write that is no apply.
test_a_dropped_record_follows_the_rule if {
	every a in ["warn", "prune", "deny"] {
		ds := orphaned_field.decisions with input as t.make_input("server-side-apply", "platform", {"droppedRecord": dropped})
			with data.applyhygiene.config as {"rules": {"orphaned-field": {"action": a}}}
		t.actions(ds) == {["orphaned-field", "repair"]}
	}
	every a in ["dryrun", "off"] {
		ds := orphaned_field.decisions with input as t.make_input("server-side-apply", "platform", {"droppedRecord": dropped})
			with data.applyhygiene.config as {"rules": {"orphaned-field": {"action": a}}}
		count(ds) == 0
	}
	too_large := orphaned_field.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"droppedRecord": object.union(dropped, {"fits": false})})
	count(too_large) == 0
	edit := orphaned_field.decisions with input as t.make_input("imperative", "kubectl-annotate", {"droppedRecord": dropped})
	count(edit) == 0
	dry := object.union(t.make_input("client-side-apply", "kubectl-client-side-apply", {"droppedRecord": dropped}), {"request": {"dryRun": true}})
	some d in orphaned_field.decisions with input as dry
	contains(d.message, "apply-hygiene would put (this is a dry run: nothing is stored) it back")
}
