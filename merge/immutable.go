package merge

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// frozenOnUpdate are, per built-in kind (apiVersion and kind), the fields
// whose content the API server's update validation freezes once the
// object exists (Kubernetes 1.37): an update that removes a field inside
// one is refused (422), whoever sends it; open lists the fields inside a
// frozen one that stay mutable.
//   - A Pod's spec is immutable but for images, tolerations added, a lower
//     activeDeadlineSeconds and scheduling gates removed (ValidatePodUpdate).
//   - A Job's pod template, selector, completions, completionMode,
//     podFailurePolicy, backoffLimitPerIndex, managedBy and successPolicy
//     are immutable (ValidateJobSpecUpdate; completions may change for an
//     elastic Indexed Job but never become nil; a suspended Job's few
//     mutable scheduling fields of its template are kept frozen: a prune
//     there is only missed, never refused).
//   - A StatefulSet's spec is immutable but for replicas, ordinals,
//     template, updateStrategy, revisionHistoryLimit,
//     persistentVolumeClaimRetentionPolicy and minReadySeconds
//     (ValidateStatefulSetUpdate).
//   - The selector of a Deployment, a ReplicaSet and a DaemonSet of
//     apps/v1 is immutable.
//   - A Secret's type is immutable (ValidateSecretUpdate).
//   - A PersistentVolumeClaim's spec is immutable but for a bound claim's
//     storage request, which may only grow, and its
//     volumeAttributesClassName, which may not become nil once in use
//     (ValidatePersistentVolumeClaimUpdate): no removal passes.
//   - A PersistentVolume's volume source (spec.csi, spec.nfs, ...),
//     volumeMode, nodeAffinity and volumeAttributesClassName are immutable
//     (ValidatePersistentVolumeUpdate), and its capacity and accessModes
//     are required (ValidatePersistentVolumeSpec).
//   - A StorageClass's parameters, provisioner, reclaimPolicy and
//     volumeBindingMode (ValidateStorageClassUpdate), a RoleBinding's and
//     a ClusterRoleBinding's roleRef, an IngressClass's controller, a
//     PriorityClass's value and preemptionPolicy, a RuntimeClass's
//     handler, an EndpointSlice's addressType, a CSIDriver's
//     attachRequired and volumeLifecycleModes, the spec of a
//     VolumeAttachment, a ResourceClaim and a ResourceClaimTemplate and a
//     ResourceQuota's scopes are immutable.
//
// Three more refusals depend on the object (removalRefused): the data of a
// Secret or a ConfigMap marked immutable, a pod template's label that the
// workload's selector needs, and a Secret's data or annotation its type
// requires and a LoadBalancer Service's loadBalancerClass.
//
// Kept by hand: the API server publishes no such table, and the removal
// proof's dry run (internal/orphanproof) is not there for offline drivers.
var frozenOnUpdate = map[string]struct{ frozen, open []string }{
	"v1/Pod": {frozen: []string{"spec"}, open: []string{"spec.schedulingGates"}},
	"batch/v1/Job": {frozen: []string{"spec.template", "spec.selector", "spec.completions", "spec.completionMode", "spec.podFailurePolicy",
		"spec.backoffLimitPerIndex", "spec.managedBy", "spec.successPolicy"}},
	"apps/v1/StatefulSet": {frozen: []string{"spec"}, open: []string{"spec.replicas", "spec.ordinals", "spec.template", "spec.updateStrategy",
		"spec.revisionHistoryLimit", "spec.persistentVolumeClaimRetentionPolicy", "spec.minReadySeconds"}},
	"apps/v1/Deployment":       {frozen: []string{"spec.selector"}},
	"apps/v1/ReplicaSet":       {frozen: []string{"spec.selector"}},
	"apps/v1/DaemonSet":        {frozen: []string{"spec.selector"}},
	"v1/Secret":                {frozen: []string{"type"}},
	"v1/PersistentVolumeClaim": {frozen: []string{"spec"}},
	"v1/PersistentVolume": {frozen: []string{"spec"}, open: []string{"spec.claimRef", "spec.persistentVolumeReclaimPolicy",
		"spec.storageClassName", "spec.mountOptions"}},
	"v1/ResourceQuota":                                {frozen: []string{"spec.scopes"}},
	"storage.k8s.io/v1/StorageClass":                  {frozen: []string{"parameters", "provisioner", "reclaimPolicy", "volumeBindingMode"}},
	"storage.k8s.io/v1/CSIDriver":                     {frozen: []string{"spec.attachRequired", "spec.volumeLifecycleModes"}},
	"storage.k8s.io/v1/VolumeAttachment":              {frozen: []string{"spec"}},
	"rbac.authorization.k8s.io/v1/RoleBinding":        {frozen: []string{"roleRef"}},
	"rbac.authorization.k8s.io/v1/ClusterRoleBinding": {frozen: []string{"roleRef"}},
	"networking.k8s.io/v1/IngressClass":               {frozen: []string{"spec.controller"}},
	"scheduling.k8s.io/v1/PriorityClass":              {frozen: []string{"value", "preemptionPolicy"}},
	"node.k8s.io/v1/RuntimeClass":                     {frozen: []string{"handler"}},
	"discovery.k8s.io/v1/EndpointSlice":               {frozen: []string{"addressType"}},
	"resource.k8s.io/v1/ResourceClaim":                {frozen: []string{"spec"}},
	"resource.k8s.io/v1/ResourceClaimTemplate":        {frozen: []string{"spec"}},
}

// removalRefused reports whether the API server refuses every update of
// obj that removes the field at p (frozenOnUpdate, immutableData,
// selectedTemplateLabel): such a field gets no pointer and no remove
// patch, so that no prune, fix or printed patch writes what the API
// server would refuse, failing the write under review with it.
func removalRefused(obj map[string]any, p Path) bool {
	u := unstructured.Unstructured{Object: obj}
	kind := u.GetAPIVersion() + "/" + u.GetKind()
	shape := shapeOf(p)
	return frozenByTable(kind, shape) || immutableData(kind, obj, shape) || selectedTemplateLabel(kind, obj, p) ||
		requiredBySecretType(kind, obj, p) || loadBalancerClassKept(kind, obj, shape)
}

// within reports whether the field of shape is parent or lies inside it.
func within(shape, parent string) bool {
	return shape == parent || strings.HasPrefix(shape, parent+".") || strings.HasPrefix(shape, parent+"[")
}

// frozenByTable reports whether frozenOnUpdate freezes the field of shape
// in an object of kind, or one inside it (a struct wholly outside the
// manifest is one orphan, and its removal takes the frozen field along).
func frozenByTable(kind, shape string) bool {
	fields, ok := frozenOnUpdate[kind]
	if !ok {
		return false
	}
	for _, parent := range fields.open {
		if within(shape, parent) {
			return false
		}
	}
	for _, parent := range fields.frozen {
		if within(shape, parent) || within(parent, shape) {
			return true
		}
	}
	return false
}

// immutableData reports whether the field of shape is the data of a Secret
// or a ConfigMap whose immutable is true, or immutable itself: the API
// server refuses any change of them (ValidateSecretUpdate,
// ValidateConfigMapUpdate).
func immutableData(kind string, obj map[string]any, shape string) bool {
	if kind != "v1/Secret" && kind != "v1/ConfigMap" {
		return false
	}
	if immutable, _ := obj["immutable"].(bool); !immutable {
		return false
	}
	return within(shape, "data") || within(shape, "binaryData") || within(shape, "stringData") || shape == "immutable"
}

// secretRequiredData are, per Secret type, the keys of data that
// ValidateSecret requires: all of them, or for basic-auth one of the two
// (each orphan is judged alone and a prune removes them together, so
// neither is let go).
var secretRequiredData = map[corev1.SecretType][]string{
	corev1.SecretTypeTLS:              {corev1.TLSCertKey, corev1.TLSPrivateKeyKey},
	corev1.SecretTypeDockercfg:        {corev1.DockerConfigKey},
	corev1.SecretTypeDockerConfigJson: {corev1.DockerConfigJsonKey},
	corev1.SecretTypeSSHAuth:          {corev1.SSHAuthPrivateKey},
	corev1.SecretTypeBasicAuth:        {corev1.BasicAuthUsernameKey, corev1.BasicAuthPasswordKey},
}

// requiredBySecretType reports whether p is the data, or a key of it, that
// a Secret of obj's type requires (secretRequiredData), or a service
// account token's kubernetes.io/service-account.name annotation (or its
// annotations): the API server refuses a Secret without it on every
// update (ValidateSecret), and Secrets get no removal proof.
func requiredBySecretType(kind string, obj map[string]any, p Path) bool {
	if kind != "v1/Secret" {
		return false
	}
	typ, _ := obj["type"].(string)
	shape := shapeOf(p)
	if corev1.SecretType(typ) == corev1.SecretTypeServiceAccountToken {
		return shape == "metadata.annotations" || shape == "metadata.annotations."+corev1.ServiceAccountNameKey
	}
	required, ok := secretRequiredData[corev1.SecretType(typ)]
	switch {
	case !ok || len(p) == 0 || p[0].FieldName == nil || *p[0].FieldName != "data":
		return false
	case len(p) == 1:
		return true
	default:
		return len(p) == 2 && p[1].FieldName != nil && slices.Contains(required, *p[1].FieldName)
	}
}

// loadBalancerClassKept reports whether the field of shape is the
// loadBalancerClass of a Service of type LoadBalancer: it may not change
// while the Service stays one (validateLoadBalancerClassField), and the
// server puts no old value back.
func loadBalancerClassKept(kind string, obj map[string]any, shape string) bool {
	if kind != "v1/Service" || shape != "spec.loadBalancerClass" {
		return false
	}
	typ, _, _ := unstructured.NestedString(obj, "spec", "type")
	return typ == string(corev1.ServiceTypeLoadBalancer)
}

// templateSelectors are the kinds whose spec.selector must select their
// pod template's labels, each with whether that selector is a label
// selector (true) or a map of labels (a ReplicationController's).
var templateSelectors = map[string]bool{
	"apps/v1/Deployment":       true,
	"apps/v1/ReplicaSet":       true,
	"apps/v1/DaemonSet":        true,
	"apps/v1/StatefulSet":      true,
	"batch/v1/Job":             true,
	"v1/ReplicationController": false,
}

// selectedTemplateLabel reports whether p is a label of obj's pod template
// (or its labels or metadata, a struct wholly outside the manifest) that
// obj's selector no longer matches the template's labels without: the API
// server refuses an update whose selector does not select its template
// (ValidateDeploymentSpec and its peers).
func selectedTemplateLabel(kind string, obj map[string]any, p Path) bool {
	isLabelSelector, ok := templateSelectors[kind]
	if !ok {
		return false
	}
	templateLabels, _, _ := unstructured.NestedStringMap(obj, "spec", "template", "metadata", "labels")
	switch shape := shapeOf(p); {
	case len(p) == 5 && shapeOf(p[:4]) == "spec.template.metadata.labels" && p[4].FieldName != nil:
		delete(templateLabels, *p[4].FieldName)
	case shape == "spec.template.metadata.labels" || shape == "spec.template.metadata":
		templateLabels = nil
	default:
		return false
	}
	var selector labels.Selector
	if isLabelSelector {
		raw, found, _ := unstructured.NestedMap(obj, "spec", "selector")
		if !found {
			return false
		}
		var ls metav1.LabelSelector
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
			return true // a selector the API server cannot read either: remove nothing
		}
		s, err := metav1.LabelSelectorAsSelector(&ls)
		if err != nil {
			return true
		}
		selector = s
	} else {
		set, found, _ := unstructured.NestedStringMap(obj, "spec", "selector")
		if !found || len(set) == 0 {
			return false
		}
		selector = labels.SelectorFromSet(set)
	}
	return !selector.Empty() && !selector.Matches(labels.Set(templateLabels))
}
