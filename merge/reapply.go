package merge

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	res, err := a.ApplyManifest(la, withLastAppliedOf(live, la))
	if err != nil {
		return facts
	}
	kind := live.GetKind()
	result, original := secretData(kind, res.Result.Object), secretData(kind, la.Object)
	f := newFinder()
	out := []FieldFact{}
	for _, fact := range facts {
		if !check(fact) || sameAt(fact.Path, f.at(result, fact.Path), f.at(original, fact.Path)) {
			out = append(out, fact)
		}
	}
	return out
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
	out := &unstructured.Unstructured{Object: withoutManagedFields(live.Object)}
	out = out.DeepCopy()
	annots := out.GetAnnotations()
	if annots == nil {
		annots = map[string]string{}
	}
	annots[LastAppliedAnnotation] = value
	out.SetAnnotations(annots)
	return out
}
