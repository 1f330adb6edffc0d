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
	typed := func(apiVersion, kind string, fields map[string]any) map[string]any {
		obj := map[string]any{"apiVersion": apiVersion, "kind": kind}
		for k, v := range fields {
			obj[k] = v
		}
		return obj
	}
	volume := typed("v1", "PersistentVolume", nil)
	storageClass := typed("storage.k8s.io/v1", "StorageClass", nil)
	secretOf := func(typ string, data ...string) map[string]any {
		d := map[string]any{}
		for _, k := range data {
			d[k] = "eA=="
		}
		return typed("v1", "Secret", map[string]any{"type": typ, "data": d})
	}
	tlsSecret := secretOf("kubernetes.io/tls", "tls.crt", "tls.key", "ca.crt")
	basicAuth := secretOf("kubernetes.io/basic-auth", "username", "password")
	basicAuthUser := secretOf("kubernetes.io/basic-auth", "username")
	tokenSecret := secretOf("kubernetes.io/service-account-token", "token")
	loadBalancer := typed("v1", "Service", map[string]any{"spec": map[string]any{"type": "LoadBalancer", "loadBalancerClass": "internal"}})
	clusterIP := typed("v1", "Service", map[string]any{"spec": map[string]any{"type": "ClusterIP"}})
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
		// A struct wholly outside the manifest is one orphan (wholeStruct).
		{"a template's labels, all of them", byApp, "spec.template.metadata.labels", true},
		{"a template's metadata, its labels with it", byApp, "spec.template.metadata", true},
		{"a ReplicationController's template labels, all of them", controller, "spec.template.metadata.labels", true},
		{"a Deployment's template annotations, all of them", byApp, "spec.template.metadata.annotations", false},
		// advkube: refusals the table and removalRefused left out.
		{"a PersistentVolume's NFS source", volume, "spec.nfs.readOnly", true},
		{"a PersistentVolume's CSI attributes", volume, "spec.csi.volumeAttributes[tier]", true},
		{"a PersistentVolume's volume mode", volume, "spec.volumeMode", true},
		{"a PersistentVolume's node affinity", volume, "spec.nodeAffinity", true},
		{"a PersistentVolume's capacity", volume, "spec.capacity[storage]", true},
		{"a PersistentVolume's reclaim policy", volume, "spec.persistentVolumeReclaimPolicy", false},
		{"a PersistentVolume's mount options", volume, "spec.mountOptions", false},
		{"a PersistentVolume's claim", volume, "spec.claimRef", false},
		{"a StorageClass's parameter", storageClass, "parameters[type]", true},
		{"a StorageClass's volume binding mode", storageClass, "volumeBindingMode", true},
		{"a StorageClass's mount options", storageClass, "mountOptions", false},
		{"a RoleBinding's roleRef", typed("rbac.authorization.k8s.io/v1", "RoleBinding", nil), "roleRef.apiGroup", true},
		{"a ClusterRoleBinding's roleRef", typed("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", nil), "roleRef", true},
		{"a RoleBinding's subject", typed("rbac.authorization.k8s.io/v1", "RoleBinding", nil), "subjects", false},
		{"an IngressClass's controller", typed("networking.k8s.io/v1", "IngressClass", nil), "spec.controller", true},
		{"an IngressClass's spec, its controller with it", typed("networking.k8s.io/v1", "IngressClass", nil), "spec", true},
		{"an IngressClass's parameters", typed("networking.k8s.io/v1", "IngressClass", nil), "spec.parameters", false},
		{"a Job's spec, its template with it", job, "spec", true},
		{"a PriorityClass's preemption policy", typed("scheduling.k8s.io/v1", "PriorityClass", nil), "preemptionPolicy", true},
		{"a PriorityClass's description", typed("scheduling.k8s.io/v1", "PriorityClass", nil), "description", false},
		{"a RuntimeClass's handler", typed("node.k8s.io/v1", "RuntimeClass", nil), "handler", true},
		{"an EndpointSlice's address type", typed("discovery.k8s.io/v1", "EndpointSlice", nil), "addressType", true},
		{"a CSIDriver's attachRequired", typed("storage.k8s.io/v1", "CSIDriver", nil), "spec.attachRequired", true},
		{"a VolumeAttachment's spec", typed("storage.k8s.io/v1", "VolumeAttachment", nil), "spec.source", true},
		{"a ResourceClaim's spec", typed("resource.k8s.io/v1", "ResourceClaim", nil), "spec.devices", true},
		{"a ResourceClaimTemplate's spec", typed("resource.k8s.io/v1", "ResourceClaimTemplate", nil), "spec.spec.devices", true},
		{"a ResourceQuota's scopes", typed("v1", "ResourceQuota", nil), "spec.scopes", true},
		{"a ResourceQuota's hard limit", typed("v1", "ResourceQuota", nil), "spec.hard[pods]", false},
		{"a TLS Secret's key", tlsSecret, "data[tls.key]", true},
		{"a TLS Secret's certificate", tlsSecret, "data[tls.crt]", true},
		{"a TLS Secret's data", tlsSecret, "data", true},
		{"a TLS Secret's CA", tlsSecret, "data[ca.crt]", false},
		// Each orphan is judged alone, and a prune removes them together:
		// a username and a password that are both orphans would both go.
		{"a basic-auth Secret's password beside its username", basicAuth, "data[password]", true},
		{"a basic-auth Secret's other data", basicAuth, "data[note]", false},
		{"a basic-auth Secret's data beside a username only", basicAuthUser, "data[note]", false},
		{"a basic-auth Secret's only username", basicAuthUser, "data[username]", true},
		{"a service account token's account", tokenSecret, "metadata.annotations[kubernetes.io/service-account.name]", true},
		{"a service account token's token", tokenSecret, "data[token]", false},
		{"a LoadBalancer Service's class", loadBalancer, "spec.loadBalancerClass", true},
		{"a ClusterIP Service's class", clusterIP, "spec.loadBalancerClass", false},
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
