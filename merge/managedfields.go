package merge

import (
	"bytes"
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Owner is a field manager that owns a field, from metadata.managedFields.
type Owner struct {
	// Manager is the field manager's name, e.g. "kubectl-edit".
	Manager string `json:"manager"`
	// Operation is "Update" or "Apply".
	Operation string `json:"operation"`
	// Subresource is set when the write went to one, e.g. "scale".
	Subresource string `json:"subresource,omitempty"`
	// Time is when the manager last changed its fields.
	Time time.Time `json:"time,omitzero"`
	// APIVersion is the version the manager wrote in.
	APIVersion string `json:"apiVersion,omitempty"`
}

// ManagedFields is one entry of metadata.managedFields, decoded.
type ManagedFields struct {
	Owner
	// Fields is the set of fields the manager owns.
	Fields *fieldpath.Set
}

// DecodeManagedFields decodes obj's metadata.managedFields into one field
// set per manager, in the order the server keeps them.
func DecodeManagedFields(obj *unstructured.Unstructured) ([]ManagedFields, error) {
	meta, _ := obj.Object["metadata"].(map[string]any)
	raw, ok := meta["managedFields"]
	if !ok || raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("decoding managedFields: not a list")
	}
	out := make([]ManagedFields, 0, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("decoding managedFields[%d]: not an object", i)
		}
		var e metav1.ManagedFieldsEntry
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &e); err != nil {
			return nil, fmt.Errorf("decoding managedFields[%d]: %w", i, err)
		}
		mf, err := decodeEntry(e)
		if err != nil {
			return nil, fmt.Errorf("decoding managedFields[%d]: %w", i, err)
		}
		out = append(out, mf)
	}
	return out, nil
}

func decodeEntry(e metav1.ManagedFieldsEntry) (ManagedFields, error) {
	mf := ManagedFields{
		Owner: Owner{
			Manager:     e.Manager,
			Operation:   string(e.Operation),
			Subresource: e.Subresource,
			APIVersion:  e.APIVersion,
		},
		Fields: &fieldpath.Set{},
	}
	if e.Time != nil {
		mf.Time = e.Time.UTC()
	}
	if raw := e.FieldsV1.GetRawBytes(); len(raw) > 0 {
		if err := mf.Fields.FromJSON(bytes.NewReader(raw)); err != nil {
			return ManagedFields{}, fmt.Errorf("decoding fieldsV1 of %q: %w", e.Manager, err)
		}
	}
	return mf, nil
}

// owners returns the managers owning p: those whose set holds p, a field
// under p, or an ancestor of p as an atomic leaf. Newest first.
func owners(mfs []ManagedFields, p Path) []Owner {
	var out []Owner
	for _, mf := range mfs {
		if ownsPath(mf.Fields, p) {
			out = append(out, mf.Owner)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	return out
}

func ownsPath(s *fieldpath.Set, p Path) bool {
	cur := s
	for i, pe := range p {
		if cur.Members.Has(pe) {
			child := cur.WithPrefix(pe)
			if i == len(p)-1 || child.Empty() {
				return true
			}
		}
		cur = cur.WithPrefix(pe)
		if cur.Empty() {
			return false
		}
	}
	return !cur.Empty()
}
