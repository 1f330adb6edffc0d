package merge

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// putBack keeps the facts whose field the next `kubectl apply` of the same
// manifest la (the last-applied that the write was judged against) sets
// back to its last-applied value.
// kubectl's own three-way patch decides, not the field sets: their list
// keys can differ from the patch's merge keys. Field sets key a
// container's ports by containerPort and protocol, kubectl's strategic
// merge patch by containerPort alone, so an edit of a port's protocol
// changes a field that last-applied owns, yet kubectl's patch for the next
// apply is {} and the edit stays. Facts whose field the next apply leaves
// alone are dropped. When kubectl could not compute its patch either (an
// object that does not fit its kind, which the API server never sends),
// the facts are kept as the field sets found them.
func (a *Analyzer) putBack(la, live *unstructured.Unstructured, facts []FieldFact) []FieldFact {
	check := func(f FieldFact) bool { return len(facts) <= verifyAll || multiKey(f.Path) }
	if !slices.ContainsFunc(facts, check) {
		return facts
	}
	if !a.withoutPruning && live.GetKind() != "Secret" {
		if out, ok := a.putBackPruned(la, live, facts, check); ok {
			return out
		}
	}
	return a.putBackWhole(la, live, facts, check)
}

// putBackPruned is putBack with kubectl's patch recomputed on la and live
// cut down to the map keys and merged list elements on the way to the
// checked facts (keepTree): the rest of the object (the other containers,
// volumes, labels, status…) costs most of the JSON encoding, patching and
// decoding, and cannot change the result at a fact's path:
//
//   - a strategic or JSON merge patch is computed and applied key by key:
//     the entry of map key k depends on the values at k of the previous
//     manifest, the manifest and live alone, and so does the result at k;
//     any directive written in la is kept (prune);
//   - a strategic merge patch merges a list with patchStrategy merge
//     element by element, matched by the merge key (the patch metadata
//     of the kind's Go type says which): the element with merge key value
//     v after the patch depends on the elements with value v alone. Only
//     the order differs ($setElementOrder lists the kept elements), and a
//     fact's element is found by its key, not its place. The other lists
//     (JSON merge patch, patchStrategy replace, no merge key, or a merge
//     key that is not part of the field sets' key) are kept whole, and so
//     are the elements that have no scalar merge key;
//   - the one exception, $retainKeys (a map whose patch lists the keys the
//     result keeps), names the manifest's keys of that map, and every key
//     on the way to a fact is in the manifest: la has a non-empty value at
//     each fact's path (imperativeChanges and drift skip the others);
//   - apiVersion, kind and metadata.name, which decide the patch type and
//     kubectl's checks, are always kept;
//   - a Secret's stringData is folded into data (storedForm) across keys:
//     Secrets are never pruned.
//
// Recomputing on the whole objects fails where they do not fit the kind
// (which the API server never sends), and putBack then keeps every fact;
// a failure in a part that pruning left out would go unseen. So only an
// answer that keeps every fact is taken from the pruned objects (the
// whole objects give the same, or fail and keep every fact too); a
// failure or a dropped fact falls back to the whole objects (ok false).
func (a *Analyzer) putBackPruned(la, live *unstructured.Unstructured, facts []FieldFact, check func(FieldFact) bool) ([]FieldFact, bool) {
	paths := make([]Path, 0, len(facts))
	for _, f := range facts {
		if check(f) {
			paths = append(paths, f.Path)
		}
	}
	keep := keepTreeOf(paths, a.patchMeta(live))
	out, err := a.keptAfterApply(keep.pruneObject(la), keep.pruneObject(live), facts, check)
	if err != nil || len(out) != len(facts) {
		return nil, false
	}
	return out, true
}

// patchMeta returns the strategic merge patch metadata of obj's kind, nil
// when kubectl sends a JSON merge patch for it (no Go type).
func (a *Analyzer) patchMeta(obj *unstructured.Unstructured) strategicpatch.LookupPatchMeta {
	dataStruct, err := a.scheme.New(obj.GroupVersionKind())
	if err != nil {
		return nil
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(dataStruct)
	if err != nil {
		return nil
	}
	return meta
}

func (a *Analyzer) putBackWhole(la, live *unstructured.Unstructured, facts []FieldFact, check func(FieldFact) bool) []FieldFact {
	out, err := a.keptAfterApply(la, live, facts, check)
	if err != nil {
		return facts
	}
	return out
}

// keptAfterApply returns the facts that are not checked or whose field
// the apply of la onto live sets back to la's value.
func (a *Analyzer) keptAfterApply(la, live *unstructured.Unstructured, facts []FieldFact, check func(FieldFact) bool) ([]FieldFact, error) {
	res, err := a.ApplyManifest(la, withLastAppliedOf(live, la))
	if err != nil {
		return nil, err
	}
	kind := live.GetKind()
	result, original := storedForm(kind, res.Result.Object), storedForm(kind, la.Object)
	f := newFinder()
	out := []FieldFact{}
	for _, fact := range facts {
		if !check(fact) || sameAt(fact.Path, f.at(result, fact.Path), f.at(original, fact.Path)) {
			out = append(out, fact)
		}
	}
	return out, nil
}

// verifyAll is how many facts putBack checks one by one. Recomputing
// kubectl's patch costs O(n²) in the length of a keyed list, seconds for
// an edit that replaced 10,000 env entries, so beyond it only the facts
// whose path crosses a list keyed by several fields are checked: there
// alone the field sets' keys and the patch's single merge key differ
// (containerPort+protocol against containerPort, port+protocol against
// port, topologyKey+whenUnsatisfiable against topologyKey).
const verifyAll = 64

// multiKey reports whether p crosses a list element keyed by several
// fields.
func multiKey(p Path) bool {
	for _, pe := range p {
		if pe.Key != nil && len(*pe.Key) > 1 {
			return true
		}
	}
	return false
}

// withLastAppliedOf returns live with la as its last-applied annotation,
// as the next apply of la would find it; live itself is not changed.
func withLastAppliedOf(live, la *unstructured.Unstructured) *unstructured.Unstructured {
	value, err := LastAppliedValue(la)
	if err != nil || live.GetAnnotations()[LastAppliedAnnotation] == value {
		return live
	}
	return withLastAppliedValue(&unstructured.Unstructured{Object: withoutManagedFields(live.Object)}, value)
}

// withLastAppliedValue returns obj with value as its last-applied
// annotation; obj is not changed. The copy is shallow: new maps for the
// object, its metadata and annotations, every other value shared, so the
// result must only be read. Metadata or annotations of the wrong types
// (which SetAnnotations handles its own way) take a deep copy instead.
func withLastAppliedValue(obj *unstructured.Unstructured, value string) *unstructured.Unstructured {
	rawMeta, hasMeta := obj.Object["metadata"]
	meta, metaOK := rawMeta.(map[string]any)
	annots, annotsOK := meta["annotations"].(map[string]any)
	if (hasMeta && !metaOK) || (!annotsOK && meta["annotations"] != nil) || !allStrings(annots) {
		out := obj.DeepCopy()
		SetLastApplied(out, value)
		return out
	}
	out := make(map[string]any, len(obj.Object)+1)
	for k, v := range obj.Object {
		out[k] = v
	}
	m := make(map[string]any, len(meta)+1)
	for k, v := range meta {
		m[k] = v
	}
	a := make(map[string]any, len(annots)+1)
	for k, v := range annots {
		a[k] = v
	}
	a[LastAppliedAnnotation] = value
	m["annotations"] = a
	out["metadata"] = m
	return &unstructured.Unstructured{Object: out}
}

func allStrings(m map[string]any) bool {
	for _, v := range m {
		if _, ok := v.(string); !ok {
			return false
		}
	}
	return true
}
