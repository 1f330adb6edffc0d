package merge

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// LeftByReapply returns the facts whose field kubectl's own patch for an
// apply of old's last-applied onto old (three-way: original and modified
// are last-applied, current is old) leaves alone: old's value there is
// what that apply keeps. A write under kubectl apply's name that leaves
// last-applied as it was is such an apply; where that patch sets or
// deletes a field, the field is the apply's change, whatever value the
// write ended with (a mutating webhook may rewrite it after kubectl, such
// as one that pins an image tag to its current digest). The facts it
// returns are the fields the write moved although kubectl apply would
// not have: an imperative edit under kubectl apply's name (kubectl set
// image --field-manager=kubectl-client-side-apply).
//
// When old has no usable last-applied or kubectl could not compute its
// patch (an object that does not fit its kind, which the API server never
// sends), no write can be told from an apply and no fact is returned.
func (a *Analyzer) LeftByReapply(old *unstructured.Unstructured, facts []FieldFact) []FieldFact {
	out := []FieldFact{}
	if len(facts) == 0 {
		return out
	}
	la, _, err := a.parseLastApplied(old)
	if err != nil {
		return out
	}
	res, err := a.ApplyManifest(la, old)
	if err != nil {
		return out
	}
	kind := old.GetKind()
	result, current := storedForm(kind, res.Result.Object), storedForm(kind, old.Object)
	f := newFinder()
	for _, fact := range facts {
		if sameAt(fact.Path, f.at(result, fact.Path), f.at(current, fact.Path)) {
			out = append(out, fact)
		}
	}
	return out
}
