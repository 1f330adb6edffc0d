package review

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// handsOverOwnership reports whether a write changes nothing but
// metadata.managedFields (and what the server maintains: resourceVersion,
// generation, status) and there moves fields from one manager's entry to
// another's (merge.OwnershipHandedOver): the managedFields upgrade that
// kubectl apply --server-side sends on an object applied client-side
// (k8s.io/client-go/util/csaupgrade) and that kubectl hygiene migrate
// writes. It applies no manifest and changes no field, so no rule has
// anything to say about it, whichever entry it names: reviewed as the
// server-side apply of the Apply entry it fills, it would take that
// entry's fields for a manifest and report every other field as an orphan.
// A server-side apply that changes no value is not one: it only shares
// fields or gives up its own, so it is still reviewed (its orphans are
// real). It compares in place, as onlyLastAppliedChanged.
func handsOverOwnership(old, new *unstructured.Unstructured) bool {
	oldMeta, _ := old.Object["metadata"].(map[string]any)
	newMeta, _ := new.Object["metadata"].(map[string]any)
	return equalExcept(old.Object, new.Object, "metadata", "status") &&
		equalExcept(oldMeta, newMeta, "managedFields", "resourceVersion", "generation") &&
		merge.OwnershipHandedOver(old, new)
}
