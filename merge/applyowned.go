package merge

import (
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// applyOwnedChanges returns the server-side appliers of old (its Apply
// entries on the main resource) and lists the fields that a write turned from old into new
// and that a server-side applier owned before it: an Apply entry of old's
// managedFields on the main resource (kubectl apply --server-side, a
// GitOps controller such as Flux's kustomize-controller or Argo CD, Helm
// 4). The write takes the field over, and the applier's next apply puts
// its own value back (GitOps controllers apply with force; kubectl apply
// --server-side stops on the conflict). Each fact's Owners are the
// appliers that owned the field; Live is the value before the write and
// Result the value after it.
//
// Only changed and removed fields count: a field the write adds is owned
// by nobody else, so no apply reverts it. Server-managed fields are left
// out, and so is a field the same appliers still own in new when the API
// server tracked the write (new's managedFields differ from old's): an
// Update takes over every field it changes, so the write did not change
// it; a mutating webhook called after the API server tracked the write
// did (a mesh injector's stamp that a migrated last-applied gave to a
// server-side manager, a digest-pinning webhook's image). A result whose
// managedFields nobody tracked (a prediction) keeps every change. An object without an Apply entry, the common case, costs one walk
// over its managedFields entries and no field set.
func (a *Analyzer) applyOwnedChanges(old, new *unstructured.Unstructured) ([]Owner, []FieldFact, error) {
	out, who := []FieldFact{}, []Owner{}
	if !hasApplyEntry(old.Object) {
		return who, out, nil
	}
	mfs, err := DecodeManagedFields(old)
	if err != nil {
		return nil, nil, err
	}
	var appliers []ManagedFields
	for _, mf := range mfs {
		if mf.Operation == string(metav1.ManagedFieldsOperationApply) && mf.Subresource == "" {
			appliers = append(appliers, mf)
			who = append(who, mf.Owner)
		}
	}
	cmp, err := a.compareStored(old, new)
	if err != nil {
		return nil, nil, err
	}
	still, err := stillApplied(old, new)
	if err != nil {
		return nil, nil, err
	}
	kind, f := new.GetKind(), newFinder()
	for _, p := range units(cmp.Modified.Union(cmp.Removed)) {
		if serverManaged(p) {
			continue
		}
		ows := owners(appliers, p)
		if len(ows) == 0 || sameOwners(ows, owners(still, p)) {
			continue
		}
		out = append(out, a.fact(kind, p, factValues{live: f.at(old.Object, p), result: f.at(new.Object, p)}, ows))
	}
	return who, out, nil
}

// hasApplyEntry reports whether obj's managedFields has an Apply entry on
// the main resource, without decoding any field set.
func hasApplyEntry(obj map[string]any) bool {
	meta, _ := obj["metadata"].(map[string]any)
	entries, _ := meta["managedFields"].([]any)
	for _, e := range entries {
		m, _ := e.(map[string]any)
		if m["operation"] == string(metav1.ManagedFieldsOperationApply) && (m["subresource"] == nil || m["subresource"] == "") {
			return true
		}
	}
	return false
}

// stillApplied returns new's Apply entries on the main resource when the
// API server tracked the write (new's managedFields differ from old's);
// none otherwise.
func stillApplied(old, new *unstructured.Unstructured) ([]ManagedFields, error) {
	if equality.Semantic.DeepEqual(old.GetManagedFields(), new.GetManagedFields()) {
		return nil, nil
	}
	mfs, err := DecodeManagedFields(new)
	if err != nil {
		return nil, err
	}
	var out []ManagedFields
	for _, mf := range mfs {
		if mf.Operation == string(metav1.ManagedFieldsOperationApply) && mf.Subresource == "" {
			out = append(out, mf)
		}
	}
	return out, nil
}
