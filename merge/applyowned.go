package merge

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
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
// Result the value after it. lastApplied is old's last-applied (nil when
// it has none).
//
// Only changed and removed fields count: a field the write adds is owned
// by nobody else, so no apply reverts it. Server-managed fields are left
// out, and so is a field the same appliers still own in new when the API
// server tracked the write (new's managedFields differ from old's): an
// Update takes over every field it changes, so the write did not change
// it; a mutating webhook called after the API server tracked the write
// did (a mesh injector's stamp that a migrated last-applied gave to a
// server-side manager, a digest-pinning webhook's image). A result whose
// managedFields nobody tracked (a prediction) keeps every change.
//
// Ownership is read as contentOwners reads it: an entry holding a map or
// struct as an empty leaf owns it as it was, empty, not the keys put in it
// since (a migrated last-applied's "annotations":{} owns no annotation).
// And kubectl's own entry applies what old's last-applied has
// (appliesLastApplied): a field it owns that last-applied lacks is a
// server default that a migration handed it (kubectl hygiene migrate,
// kubectl's own upgrade of client-side apply) or the alias the server
// writes beside serviceAccountName, which its next apply neither puts back
// nor conflicts on.
//
// An object without an Apply entry, the common case, costs one walk over
// its managedFields entries and no field set.
func (a *Analyzer) applyOwnedChanges(old, new, lastApplied *unstructured.Unstructured) ([]Owner, []FieldFact, error) {
	out, who := []FieldFact{}, []Owner{}
	if !hasApplyEntry(old.Object) {
		return who, out, nil
	}
	mfs, err := DecodeManagedFields(old)
	if err != nil {
		return nil, nil, err
	}
	appliers := applyEntries(mfs)
	for _, mf := range appliers {
		who = append(who, mf.Owner)
	}
	tvs, err := a.fieldSets(stored(old.Object), stored(new.Object))
	if err != nil {
		return nil, nil, err
	}
	cmp, err := tvs[0].Compare(tvs[1])
	if err != nil {
		return nil, nil, fmt.Errorf("comparing old and new object: %w", err)
	}
	still, err := stillApplied(old, new)
	if err != nil {
		return nil, nil, err
	}
	kind, f := new.GetKind(), newFinder()
	v := applierView{f: f}
	if lastApplied != nil {
		v.lastApplied = storedForm(kind, lastApplied.Object)
	}
	granularOld, granularNew := granularIn(tvs[0]), granularIn(tvs[1])
	changed := cmp.Modified.Union(cmp.Removed)
	held := func(p Path) bool { return len(v.owners(appliers, p, granularOld)) > 0 || f.at(v.lastApplied, p).ok }
	for _, p := range units(changed) {
		if serverManaged(p) || reportedAtSource(new.Object, p, changed, held) {
			continue
		}
		ows := v.owners(appliers, p, granularOld)
		if len(ows) == 0 || sameOwners(ows, v.owners(still, p, granularNew)) {
			continue
		}
		out = append(out, a.fact(kind, p, factValues{live: f.at(old.Object, p), result: f.at(new.Object, p)}, ows))
	}
	return who, out, nil
}

// applierView tells, for one write, which appliers applied a field.
type applierView struct {
	f *finder
	// lastApplied is the object's last-applied before the write, as
	// stored (a Secret's stringData folded into data); nil without one.
	lastApplied map[string]any
}

// owners are the entries of mfs that own p, read as contentOwners reads
// them, except kubectl's own Apply entry where last-applied lacks p (see
// appliesLastApplied).
func (v applierView) owners(mfs []ManagedFields, p Path, granular func(fieldpath.Path) bool) []Owner {
	return slices.DeleteFunc(contentOwners(mfs, p, granular), func(o Owner) bool {
		return v.lastApplied != nil && appliesLastApplied(o) && !v.f.at(v.lastApplied, p).ok
	})
}

// reportedAtSource reports whether p is a field the API server copies
// from another on every write (mirroredFrom: the pod spec's
// serviceAccount, from serviceAccountName) whose source the write changed
// too and held holds (an applier owns it, or last-applied has it): the
// change is the source's, reported there (here, or by imperative-edit).
// A mirror whose source nobody applied (a manifest that writes only the
// deprecated serviceAccount) is reported itself.
func reportedAtSource(obj map[string]any, p Path, changed *fieldpath.Set, held func(Path) bool) bool {
	src, ok := mirroredFrom(obj, p)
	return ok && changed.Has(fieldpath.Path(src)) && held(src)
}

// appliesLastApplied reports whether o is the Apply entry of kubectl's own
// server-side apply (manager "kubectl"): the API server writes what it
// applies into the object's last-applied annotation when the object has
// one, and kubectl's client-side applies write their manifests there, so
// while the object has last-applied that is what this entry applies.
func appliesLastApplied(o Owner) bool {
	return o.Manager == "kubectl" && o.Operation == string(metav1.ManagedFieldsOperationApply) && o.Subresource == ""
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
	return applyEntries(mfs), nil
}

// applyEntries are the Apply entries of mfs on the main resource.
func applyEntries(mfs []ManagedFields) []ManagedFields {
	var out []ManagedFields
	for _, mf := range mfs {
		if mf.Operation == string(metav1.ManagedFieldsOperationApply) && mf.Subresource == "" {
			out = append(out, mf)
		}
	}
	return out
}
