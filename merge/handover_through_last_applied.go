package merge

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// HandOverThroughLastApplied returns the record of the fields that the
// write from old to new hands over by taking them out of last-applied
// alone, as kubectl apply edit-last-applied and set-last-applied do (the
// hand-over that kubectl's documentation prescribes); the caller, which
// classifies the write, knows it is one. kubectl keeps no trace of it:
// once a person sets such a field, nothing tells it from a field set
// outside apply, and the orphan facts would report the field the person
// handed over (and prune would remove it). The record is what `kubectl
// hygiene handover` writes (HandedOverAnnotation), with the fields that
// left last-applied added to the object's record: each field still set
// on new, the topmost list element when a whole element left, except
// what no orphan fact reports anyway (server-managed fields, the
// workload's state, a built-in kind's server default) and what the
// record already lists. Value is the whole record to write, Paths the
// fields it adds. Nil when the write hands nothing over, when either
// last-applied does not fit the kind's schema, or when the object's
// record is not a JSON list (RecordHandedOver).
func (a *Analyzer) HandOverThroughLastApplied(old, new *unstructured.Unstructured) *HandoverRecord {
	// The analyzer's cache of parsed last-applied: the analysis of the
	// same write parsed both already. Read only, as the cache requires.
	before, _, err := a.parseLastApplied(old)
	if err != nil {
		return nil
	}
	after, _, err := a.parseLastApplied(new)
	if err != nil {
		return nil
	}
	kind := new.GetKind()
	// As the server stores them (a Secret's stringData is its data), so
	// that a field is looked for on new where it lives.
	was := storedForm(kind, before.Object)
	tvs, err := a.fieldSets(written(was), written(storedForm(kind, after.Object)), stored(new.Object))
	if err != nil {
		return nil
	}
	wasSet, err := tvs[0].ToFieldSet()
	if err != nil {
		return nil
	}
	nowSet, err := tvs[1].ToFieldSet()
	if err != nil {
		return nil
	}
	left := wasSet.Difference(nowSet)
	gone := func(fp fieldpath.Path) bool { return left.Has(fp) }
	builtIn := a.scheme.Recognizes(new.GroupVersionKind())
	recorded := HandedOver(new.Object)
	f := newFinder()
	seen := map[string]bool{}
	var paths []Path
	left.Leaves().Iterate(func(fp fieldpath.Path) {
		p := topElement(Path(fp), gone)
		key := p.String()
		if seen[key] || serverManaged(p) || workloadState(key) || handedOverAt(recorded, key) {
			return
		}
		seen[key] = true
		// An empty map or list that last-applied had (annotations: {})
		// set nothing: handing it over would hand over every key a
		// writer puts in it later.
		if had := f.at(was, p); !had.ok || isEmpty(had.v) {
			return
		}
		v := f.at(new.Object, p)
		if !v.ok || isEmpty(v.v) || builtIn && isServerDefault(kind, new.Object, p, v.v) {
			return
		}
		paths = append(paths, p)
	})
	if len(paths) == 0 {
		return nil
	}
	value, err := RecordHandedOver(new.Object, paths)
	if err != nil {
		return nil
	}
	// Fits also when the record would carry the annotations over
	// TooLargeThreshold: last-applied-too-large would then decide on a
	// write that was under it, and may deny it.
	size, with := AnnotationsSize(new), annotationsSizeWith(new, map[string]string{HandedOverAnnotation: value})
	fits := with <= AnnotationsLimit && (with <= TooLargeThreshold || size > TooLargeThreshold)
	out := &HandoverRecord{Value: value, Fits: fits}
	for _, p := range paths {
		out.Paths = append(out.Paths, p.String())
	}
	slices.Sort(out.Paths)
	return out
}
