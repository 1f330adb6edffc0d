package merge

import (
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// withRevertsRefused sets RevertRefused on each imperative change (or a
// stored object's drift, old and new both the object) whose
// field the API server refuses to set back from new's value to its value
// in lastApplied (revertRefused), old being the object before the write.
func withRevertsRefused(lastApplied, old, new map[string]any, facts []FieldFact) []FieldFact {
	for i := range facts {
		facts[i].RevertRefused = revertRefused(lastApplied, old, new, facts[i].Path)
	}
	return facts
}

// revertRefused reports whether the API server refuses the update that
// sets the field at p of new (the object after a write) back to its value
// in lastApplied, as the next kubectl apply of last-applied does. Kept
// narrow on purpose, to the one case a person meets and the validation
// decides from the object alone: a core v1 PersistentVolumeClaim's
// spec.resources.requests.storage that the apply would shrink
// (ValidatePersistentVolumeClaimUpdate, Kubernetes 1.37). A bound claim's
// request may not go below its stored value; with
// RecoverVolumeExpansionFailure (GA and locked since 1.34) it may, down to
// more than status.capacity, to undo a failed expansion. So only a
// last-applied quantity below new's and at or below old's capacity (which
// only grows) is refused on every version; without a capacity, or above
// it, nothing is claimed. Quantities compare by amount (1024Mi is 1Gi).
func revertRefused(lastApplied, old, new map[string]any, p Path) bool {
	u := unstructured.Unstructured{Object: new}
	if u.GetAPIVersion() != "v1" || u.GetKind() != "PersistentVolumeClaim" || shapeOf(p) != "spec.resources.requests.storage" {
		return false
	}
	back, ok := quantityAt(lastApplied, "spec", "resources", "requests", "storage")
	if !ok {
		return false
	}
	now, ok := quantityAt(new, "spec", "resources", "requests", "storage")
	if !ok || back.Cmp(now) >= 0 {
		return false
	}
	capacity, ok := quantityAt(old, "status", "capacity", "storage")
	return ok && back.Cmp(capacity) <= 0
}

// quantityAt returns the quantity at fields of obj, false when it is
// absent or no quantity.
func quantityAt(obj map[string]any, fields ...string) (resource.Quantity, bool) {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj, fields...)
	if !ok {
		return resource.Quantity{}, false
	}
	return quantity(v)
}
