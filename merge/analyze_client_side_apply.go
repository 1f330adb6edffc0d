package merge

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// AnalyzeClientSideApply analyzes a write that is known to be a
// client-side apply (kubectl apply; field manager
// kubectl-client-side-apply) as AnalyzeUpdate analyzes an apply: with the
// new last-applied as the manifest and new as the result. Unlike
// AnalyzeUpdate it does so also when last-applied stayed the same: the
// apply of an unchanged manifest still puts back what drifted (seed 001),
// and those reverts are what the apply-reverts-drift rule reports.
func (a *Analyzer) AnalyzeClientSideApply(old, new *unstructured.Unstructured) (*Analysis, error) {
	return verified(a, "client-side apply analysis", func(a *Analyzer) (*Analysis, error) { return a.analyzeClientSideApply(old, new) })
}

func (a *Analyzer) analyzeClientSideApply(old, new *unstructured.Unstructured) (*Analysis, error) {
	an, original, parsed := a.updateAnalysis(old, new)
	if _, ok := new.GetAnnotations()[LastAppliedAnnotation]; !ok {
		return a.analyzeUpdate(old, new)
	}
	return a.analyzeAppliedUpdate(old, new, original, parsed, an)
}

// analyzeAppliedUpdate analyzes an apply; original and parsed are old's
// last-applied (nil when there is none), shared and never changed.
func (a *Analyzer) analyzeAppliedUpdate(old, new, original *unstructured.Unstructured, parsed *parsedLastApplied, an *Analysis) (*Analysis, error) {
	an.Operation = "apply"
	if an.LastApplied.Status == LastAppliedInvalid {
		return an, nil
	}
	manifest, manifestParsed, err := a.parseLastApplied(new)
	if err != nil {
		return an, nil //nolint:nilerr // an unusable new annotation is reported by the next write
	}
	in := applyInput{kind: new.GetKind(), live: old, manifest: manifest, result: new,
		originalParsed: parsed, manifestParsed: manifestParsed}
	if original != nil {
		in.original = original.Object
	}
	if err := a.analyzeApply(in, an); err != nil {
		return nil, err
	}
	an.Reverts = withoutAdmissionRemovals(an.Reverts, in, a.listsReplaced(in.live))
	return an, nil
}

// withoutAdmissionRemovals drops the reverts that remove a field that
// neither the previous last-applied nor the manifest has: apply deletes
// only what the previous manifest had, or what the manifest sets to null
// (itself or an enclosing field: a null map deletes every key), or what
// is inside a field the previous manifest had and the manifest drops
// (kubectl's patch sets that field to null: labels that a person added
// with kubectl label go with the labels map that the manifest no longer
// has), so a
// mutating webhook removed it, such as apply-hygiene's own prune of an
// orphan, not the apply. When listsReplaced (a JSON merge patch), the
// apply also removes what is inside a list that either has (inList).
func withoutAdmissionRemovals(reverts []FieldFact, in applyInput, listsReplaced bool) []FieldFact {
	out := []FieldFact{}
	for _, f := range reverts {
		if at(in.original, f.Path).ok || at(in.manifest.Object, f.Path).ok || at(in.result.Object, f.Path).ok ||
			nulledIn(in.manifest.Object, f.Path) || droppedEnclosing(in.original, in.manifest.Object, f.Path) ||
			listsReplaced && (inList(in.original, f.Path) || inList(in.manifest.Object, f.Path)) {
			out = append(out, f)
		}
	}
	return out
}

// droppedEnclosing reports whether a field enclosing p is in original and
// not in manifest: kubectl's three-way patch deletes it whole.
func droppedEnclosing(original, manifest map[string]any, p Path) bool {
	for i := 1; i < len(p); i++ {
		if at(original, p[:i]).ok && !at(manifest, p[:i]).ok {
			return true
		}
	}
	return false
}

// nulledIn reports whether obj sets p or a field enclosing it to null.
func nulledIn(obj map[string]any, p Path) bool {
	for i := 1; i <= len(p); i++ {
		if v := at(obj, p[:i]); v.ok && v.v == nil {
			return true
		}
	}
	return false
}
