package merge

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// putBack keeps the facts whose field the next `kubectl apply` of the same
// manifest (live's last-applied) sets back to its last-applied value.
// kubectl's own three-way patch decides, not the field sets: their list
// keys can differ from the patch's merge keys. Field sets key a
// container's ports by containerPort and protocol, kubectl's strategic
// merge patch by containerPort alone, so an edit of a port's protocol
// changes a field that last-applied owns, yet kubectl's patch for the next
// apply is {} and the edit stays. Facts whose field the next apply leaves
// alone are dropped. When kubectl could not compute its patch either (an
// object that does not fit its kind, which the API server never sends),
// the facts are kept as the field sets found them.
func (a *Analyzer) putBack(live *unstructured.Unstructured, facts []FieldFact) ([]FieldFact, error) {
	if len(facts) == 0 {
		return facts, nil
	}
	la, err := ParseLastApplied(live)
	if err != nil {
		return nil, fmt.Errorf("reading last-applied: %w", err)
	}
	res, err := a.ApplyManifest(la, live)
	if err != nil {
		return facts, nil //nolint:nilerr // unverifiable: see above
	}
	kind := live.GetKind()
	result, original := secretData(kind, res.Result.Object), secretData(kind, la.Object)
	f := newFinder()
	out := []FieldFact{}
	for _, fact := range facts {
		if sameAt(fact.Path, f.at(result, fact.Path), f.at(original, fact.Path)) {
			out = append(out, fact)
		}
	}
	return out, nil
}
