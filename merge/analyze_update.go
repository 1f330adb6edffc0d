package merge

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// AnalyzeUpdate analyzes a write that turned old into new, as an admission
// webhook sees it. When last-applied changed, the write is an apply (or
// `set-last-applied`, `create/replace --save-config`): the analysis is the
// apply's, with the new last-applied as the manifest and new as the result.
// Otherwise it lists the imperative changes: fields that last-applied owns
// and that the write changed or removed, leaving them different from
// last-applied. A caller that knows the write is an apply says so with
// AnalyzeClientSideApply or AnalyzeServerSideApply.
func (a *Analyzer) AnalyzeUpdate(old, new *unstructured.Unstructured) (*Analysis, error) {
	return verified(a, "update analysis", func(a *Analyzer) (*Analysis, error) { return a.analyzeUpdate(old, new) })
}

// updateAnalysis starts the analysis of a write that turned old into new:
// the state of old's last-applied and the size of new's annotations. It
// also returns old's last-applied (nil when there is none) and its parse.
func (a *Analyzer) updateAnalysis(old, new *unstructured.Unstructured) (*Analysis, *unstructured.Unstructured, *parsedLastApplied) {
	an := newAnalysis(new, "update")
	info, original, parsed := a.lastAppliedInfo(old)
	an.LastApplied = info
	an.AnnotationsBytes = AnnotationsSize(new)
	an.LastAppliedTooLarge = an.AnnotationsBytes > TooLargeThreshold
	return an, original, parsed
}

func (a *Analyzer) analyzeUpdate(old, new *unstructured.Unstructured) (*Analysis, error) {
	an, original, parsed := a.updateAnalysis(old, new)
	oldRaw, hadOld := old.GetAnnotations()[LastAppliedAnnotation]
	newRaw, hasNew := new.GetAnnotations()[LastAppliedAnnotation]
	if hasNew && (!hadOld || oldRaw != newRaw) {
		return a.analyzeAppliedUpdate(old, new, original, parsed, an)
	}
	appliers, applyOwned, err := a.applyOwnedChanges(old, new)
	if err != nil {
		return nil, err
	}
	an.Appliers, an.ApplyOwnedChanges = appliers, applyOwned
	if original == nil {
		return an, nil
	}
	changes, err := orValidated(a, func(a *Analyzer) ([]FieldFact, error) {
		return a.imperativeChanges(original, parsed, old, new)
	})
	if err != nil {
		return nil, err
	}
	an.ImperativeChanges = changes
	return an, nil
}

func (a *Analyzer) imperativeChanges(lastApplied *unstructured.Unstructured, parsed *parsedLastApplied, old, new *unstructured.Unstructured) ([]FieldFact, error) {
	kind := new.GetKind()
	original := secretData(kind, lastApplied.Object)
	if !a.withoutPruning && ownedUnchanged(original, old.Object, new.Object) {
		return []FieldFact{}, nil
	}
	f := newFinder()
	tvs, err := a.fieldSets(a.writtenLastApplied(kind, original, parsed), stored(old.Object), stored(new.Object))
	if err != nil {
		return nil, err
	}
	owned, err := a.fieldSet(tvs[0], parsed.original())
	if err != nil {
		return nil, err
	}
	cmp, err := tvs[1].Compare(tvs[2])
	if err != nil {
		return nil, fmt.Errorf("comparing old and new object: %w", err)
	}
	out := []FieldFact{}
	var mfs []ManagedFields // decoded for the first change: most writes have none
	for _, p := range units(cmp.Modified.Union(cmp.Removed)) {
		la := f.at(original, p)
		if !owned.Has(fieldpath.Path(p)) || serverManaged(p) || isEmpty(la.v) || sameAt(p, f.at(new.Object, p), la) {
			continue
		}
		if mfs == nil {
			if mfs, err = DecodeManagedFields(new); err != nil {
				return nil, err
			}
		}
		out = append(out, a.fact(kind, p, factValues{live: f.at(old.Object, p), result: f.at(new.Object, p), lastApplied: la}, owners(mfs, p)))
	}
	return a.putBack(lastApplied, new, out), nil
}
