package merge

import "testing"

// TestRemovalRefused: the fields whose removal the API server refuses
// once the object exists get no pointer and no remove patch; every other
// field keeps both.
func TestRemovalRefused(t *testing.T) {
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod"}
	job := map[string]any{"apiVersion": "batch/v1", "kind": "Job"}
	deployment := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}
	statefulSet := map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet"}
	custom := map[string]any{"apiVersion": "example.com/v1", "kind": "Pod"}
	cronJob := map[string]any{"apiVersion": "batch/v1", "kind": "CronJob"}
	secret := map[string]any{"apiVersion": "v1", "kind": "Secret"}
	immutableSecret := map[string]any{"apiVersion": "v1", "kind": "Secret", "immutable": true}
	configMap := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "immutable": false}
	immutableConfigMap := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "immutable": true}
	claim := map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim"}
	selecting := func(kind string, selector any, labels map[string]any) map[string]any {
		apiVersion := "apps/v1"
		if kind == "ReplicationController" {
			apiVersion = "v1"
		}
		return map[string]any{"apiVersion": apiVersion, "kind": kind, "spec": map[string]any{
			"selector": selector, "template": map[string]any{"metadata": map[string]any{"labels": labels}}}}
	}
	webFe := map[string]any{"app": "web", "tier": "fe"}
	byApp := selecting("Deployment", map[string]any{"matchLabels": map[string]any{"app": "web"}}, webFe)
	notCanary := selecting("Deployment", map[string]any{"matchExpressions": []any{
		map[string]any{"key": "track", "operator": "NotIn", "values": []any{"canary"}}}}, map[string]any{"app": "web", "track": "stable"})
	controller := selecting("ReplicationController", map[string]any{"app": "web"}, webFe)
	for _, tc := range []struct {
		name string
		obj  map[string]any
		path string
		want bool
	}{
		{"a Pod's service account", pod, "spec.serviceAccountName", true},
		{"a Pod's container field", pod, "spec.containers[name=app].stdin", true},
		{"a Pod's scheduling gate", pod, "spec.schedulingGates[name=wait]", false},
		{"a Pod's label", pod, "metadata.labels[team]", false},
		{"a Job's pod template", job, "spec.template.spec.serviceAccountName", true},
		{"a Job's selector", job, "spec.selector.matchLabels[app]", true},
		{"a Job's parallelism", job, "spec.parallelism", false},
		{"a Job's managedBy", job, "spec.managedBy", true},
		{"a Job's podFailurePolicy", job, "spec.podFailurePolicy", true},
		{"a Job's backoffLimitPerIndex", job, "spec.backoffLimitPerIndex", true},
		{"a Job's suspend", job, "spec.suspend", false},
		{"a Pod's scheduling gates list", pod, "spec.schedulingGates", false},
		{"a Pod's ephemeral container", pod, "spec.ephemeralContainers[name=debug]", true},
		{"a Pod's annotation", pod, "metadata.annotations[x]", false},
		{"a CronJob's job template", cronJob, "spec.jobTemplate.spec.template.spec.serviceAccountName", false},
		{"a StatefulSet's claim templates", statefulSet, "spec.volumeClaimTemplates", true},
		{"a StatefulSet's selector", statefulSet, "spec.selector.matchLabels[app]", true},
		{"a StatefulSet's update strategy", statefulSet, "spec.updateStrategy.rollingUpdate.partition", false},
		{"a Deployment's selector", deployment, "spec.selector.matchLabels[app]", true},
		{"a Deployment's strategy", deployment, "spec.strategy.rollingUpdate.maxSurge", false},
		{"a StatefulSet's claim template", statefulSet, "spec.volumeClaimTemplates[name=data].spec.storageClassName", true},
		{"a StatefulSet's service name", statefulSet, "spec.serviceName", true},
		{"a StatefulSet's pod template", statefulSet, "spec.template.spec.serviceAccountName", false},
		{"a StatefulSet's revision history", statefulSet, "spec.revisionHistoryLimit", false},
		{"a Deployment's pod template", deployment, "spec.template.spec.serviceAccountName", false},
		{"a custom resource named Pod", custom, "spec.serviceAccountName", false},
		{"a Job's completions", job, "spec.completions", true},
		{"a Secret's type", secret, "type", true},
		{"a Secret's data", secret, "data[password]", false},
		{"an immutable Secret's data", immutableSecret, "data[password]", true},
		{"an immutable Secret's immutable", immutableSecret, "immutable", true},
		{"an immutable Secret's label", immutableSecret, "metadata.labels[team]", false},
		{"a ConfigMap's immutable, false", configMap, "immutable", false},
		{"a ConfigMap's data", configMap, "data[key]", false},
		{"an immutable ConfigMap's binary data", immutableConfigMap, "binaryData[key]", true},
		{"a claim's storage class", claim, "spec.storageClassName", true},
		{"a claim's attributes class", claim, "spec.volumeAttributesClassName", true},
		{"a claim's label", claim, "metadata.labels[team]", false},
		{"a template label the selector needs", byApp, "spec.template.metadata.labels[app]", true},
		{"a template label the selector ignores", byApp, "spec.template.metadata.labels[tier]", false},
		{"a template annotation", byApp, "spec.template.metadata.annotations[app]", false},
		{"a template label a NotIn selector still matches without", notCanary, "spec.template.metadata.labels[track]", false},
		{"a ReplicationController's selected template label", controller, "spec.template.metadata.labels[app]", true},
		{"a ReplicationController's other template label", controller, "spec.template.metadata.labels[tier]", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := removalRefused(tc.obj, mustPath(t, tc.path)); got != tc.want {
				t.Errorf("removalRefused(%s) = %v, want %v", tc.path, got, tc.want)
			}
		})
	}
}

// TestFrozenFactsGetNoPatch: an orphan whose removal the API server
// refuses is Frozen, with no pointer and no remove patch.
func TestFrozenFactsGetNoPatch(t *testing.T) {
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": map[string]any{"hostname": "h"}}
	got := withRemovePatches(pod, []FieldFact{{Path: mustPath(t, "spec.hostname")}})[0]
	if !got.Frozen || got.Pointer != "" || got.RemovePatch != "" {
		t.Errorf("fact = %+v, want frozen without pointer or remove patch", got)
	}
	deployment := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"paused": true}}
	got = withRemovePatches(deployment, []FieldFact{{Path: mustPath(t, "spec.paused")}})[0]
	if got.Frozen || got.Pointer != "/spec/paused" || got.RemovePatch == "" {
		t.Errorf("fact = %+v, want a pointer and a remove patch", got)
	}
}
