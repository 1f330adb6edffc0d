package merge

import (
	"strings"

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
//
// Two more refusals depend on the object (removalRefused): the data of a
// Secret or a ConfigMap marked immutable, and a pod template's label that
// the workload's selector needs.
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
	return frozenByTable(kind, shape) || immutableData(kind, obj, shape) || selectedTemplateLabel(kind, obj, p)
}

// within reports whether the field of shape is parent or lies inside it.
func within(shape, parent string) bool {
	return shape == parent || strings.HasPrefix(shape, parent+".") || strings.HasPrefix(shape, parent+"[")
}

// frozenByTable reports whether frozenOnUpdate freezes the field of shape
// in an object of kind.
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
		if within(shape, parent) {
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
// that obj's selector no longer matches the template's labels without:
// the API server refuses an update whose selector does not select its
// template (ValidateDeploymentSpec and its peers).
func selectedTemplateLabel(kind string, obj map[string]any, p Path) bool {
	isLabelSelector, ok := templateSelectors[kind]
	if !ok || len(p) != 5 || shapeOf(p[:4]) != "spec.template.metadata.labels" || p[4].FieldName == nil {
		return false
	}
	templateLabels, _, _ := unstructured.NestedStringMap(obj, "spec", "template", "metadata", "labels")
	delete(templateLabels, *p[4].FieldName)
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
