package merge

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// frozenOnUpdate are, per built-in kind (apiVersion and kind), the fields
// whose content the API server's update validation freezes once the
// object exists (Kubernetes 1.36): an update that removes a field inside
// one is refused (422), whoever sends it; open lists the fields inside a
// frozen one that stay mutable.
//   - A Pod's spec is immutable but for images, tolerations added, a lower
//     activeDeadlineSeconds and scheduling gates removed (ValidatePodUpdate).
//   - A Job's pod template, selector, completionMode, podFailurePolicy,
//     backoffLimitPerIndex, managedBy and successPolicy are immutable
//     (ValidateJobSpecUpdate; completions, mutable for an elastic Indexed
//     Job, and a suspended Job's few mutable scheduling fields are left
//     out: a prune there is only missed, never refused).
//   - A StatefulSet's spec is immutable but for replicas, ordinals,
//     template, updateStrategy, revisionHistoryLimit,
//     persistentVolumeClaimRetentionPolicy and minReadySeconds
//     (ValidateStatefulSetUpdate).
//   - The selector of a Deployment, a ReplicaSet and a DaemonSet of
//     apps/v1 is immutable.
//
// Kept by hand: the API server publishes no such table, and the removal
// proof's dry run (internal/orphanproof) is not there for offline drivers.
var frozenOnUpdate = map[string]struct{ frozen, open []string }{
	"v1/Pod": {frozen: []string{"spec"}, open: []string{"spec.schedulingGates"}},
	"batch/v1/Job": {frozen: []string{"spec.template", "spec.selector", "spec.completionMode", "spec.podFailurePolicy",
		"spec.backoffLimitPerIndex", "spec.managedBy", "spec.successPolicy"}},
	"apps/v1/StatefulSet": {frozen: []string{"spec"}, open: []string{"spec.replicas", "spec.ordinals", "spec.template", "spec.updateStrategy",
		"spec.revisionHistoryLimit", "spec.persistentVolumeClaimRetentionPolicy", "spec.minReadySeconds"}},
	"apps/v1/Deployment": {frozen: []string{"spec.selector"}},
	"apps/v1/ReplicaSet": {frozen: []string{"spec.selector"}},
	"apps/v1/DaemonSet":  {frozen: []string{"spec.selector"}},
}

// removalRefused reports whether the API server refuses every update of
// obj that removes the field at p (frozenOnUpdate): such a field gets no
// pointer and no remove patch, so that no prune, fix or printed patch
// writes what the API server would refuse, failing the write under
// review with it.
func removalRefused(obj map[string]any, p Path) bool {
	u := unstructured.Unstructured{Object: obj}
	kind, ok := frozenOnUpdate[u.GetAPIVersion()+"/"+u.GetKind()]
	if !ok {
		return false
	}
	shape := shapeOf(p)
	within := func(parent string) bool {
		return shape == parent || strings.HasPrefix(shape, parent+".") || strings.HasPrefix(shape, parent+"[")
	}
	for _, parent := range kind.open {
		if within(parent) {
			return false
		}
	}
	for _, parent := range kind.frozen {
		if within(parent) {
			return true
		}
	}
	return false
}
