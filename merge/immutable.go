package merge

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// frozenOnUpdate are, per built-in kind (apiVersion and kind), the fields
// whose content the API server's update validation freezes once the
// object exists: an update that removes a field inside one is refused
// (422), whoever sends it. A Pod's spec is immutable but for images,
// tolerations added, a lower activeDeadlineSeconds and scheduling gates
// removed (ValidatePodUpdate); a Job's pod template and selector are
// immutable (ValidateJobUpdate; a suspended Job's few mutable scheduling
// fields are left out: a prune there is only missed, never refused); a
// StatefulSet's spec is immutable but for replicas, ordinals, template,
// updateStrategy, persistentVolumeClaimRetentionPolicy and
// minReadySeconds (ValidateStatefulSetUpdate), of which the fields below
// are the ones a manifest sets.
// Kept by hand: the API server publishes no such table, and the removal
// proof's dry run (internal/orphanproof) is not there for offline drivers.
var frozenOnUpdate = map[string]struct{ frozen, open []string }{
	"v1/Pod":              {frozen: []string{"spec"}, open: []string{"spec.schedulingGates"}},
	"batch/v1/Job":        {frozen: []string{"spec.template", "spec.selector"}},
	"apps/v1/StatefulSet": {frozen: []string{"spec.selector", "spec.serviceName", "spec.podManagementPolicy", "spec.volumeClaimTemplates"}},
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
