package merge

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// OwnershipHandedOver reports whether new's managedFields give some field
// that an entry of old owns to another entry that did not own it, and
// take it from the first: a hand-over of ownership between managers, as
// kubectl's csaupgrade (k8s.io/client-go/util/csaupgrade, which kubectl
// apply --server-side sends on an object applied client-side) and kubectl
// hygiene migrate write it, moving client-side apply's fields to an Apply
// entry. An apply never does that without changing the field's value: it
// shares a field whose value it leaves as it is, and takes one over only
// on a conflict, that is with another value. Unreadable managedFields
// hand nothing over.
func OwnershipHandedOver(old, new *unstructured.Unstructured) bool {
	before, err := DecodeManagedFields(old)
	if err != nil {
		return false
	}
	after, err := DecodeManagedFields(new)
	if err != nil {
		return false
	}
	fieldsOf := func(mfs []ManagedFields) map[string]*fieldpath.Set {
		out := make(map[string]*fieldpath.Set, len(mfs))
		for _, mf := range mfs {
			key := mf.Manager + "\x00" + mf.Operation + "\x00" + mf.Subresource
			if s, ok := out[key]; ok {
				out[key] = s.Union(mf.Fields)
				continue
			}
			out[key] = mf.Fields
		}
		return out
	}
	oldSets, newSets := fieldsOf(before), fieldsOf(after)
	empty := &fieldpath.Set{}
	lost, gained := &fieldpath.Set{}, &fieldpath.Set{}
	for key, s := range oldSets {
		now, ok := newSets[key]
		if !ok {
			now = empty
		}
		lost = lost.Union(s.Difference(now))
	}
	for key, s := range newSets {
		was, ok := oldSets[key]
		if !ok {
			was = empty
		}
		gained = gained.Union(s.Difference(was))
	}
	return !lost.Intersection(gained).Empty()
}
