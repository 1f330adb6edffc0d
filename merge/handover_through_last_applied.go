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
// on new, the topmost list element when a whole element left, the topmost
// map or struct below the top level when it left whole (wholeMapsLeft), except
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
	was, now := storedForm(kind, before.Object), storedForm(kind, after.Object)
	tvs, err := a.fieldSets(written(was), written(now), stored(new.Object))
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
	// The record to add to: new's, or old's when the write dropped it (a
	// kubectl apply whose manifest lacks the copy that last-applied held:
	// RecordDroppedByApply), whose entries stay.
	base := new.Object
	if _, ok := new.GetAnnotations()[HandedOverAnnotation]; !ok {
		base = old.Object
	}
	recorded := HandedOver(base)
	f := newFinder()
	seen := map[string]bool{}
	var paths []Path
	var kept []string // fields that left and are not handed over
	left.Leaves().Iterate(func(fp fieldpath.Path) {
		p := topElement(Path(fp), gone)
		key := p.String()
		if seen[key] || handedOverAt(recorded, key) {
			return
		}
		if serverManaged(p) || workloadState(key) {
			kept = append(kept, key)
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
		if !v.ok || isEmpty(v.v) {
			return
		}
		if builtIn && isServerDefault(kind, new.Object, p, v.v) {
			kept = append(kept, key)
			return
		}
		paths = append(paths, p)
	})
	// Looked up in last-applied itself, not its field set: a key kept
	// with an empty list adds nothing to a field set.
	paths = wholeMapsLeft(paths, kept, func(q Path) bool { return f.at(now, q).ok })
	if len(paths) == 0 {
		return nil
	}
	value, err := RecordHandedOver(base, paths)
	if err != nil {
		return nil
	}
	out := &HandoverRecord{Value: value, Fits: recordFits(new, value)}
	for _, p := range paths {
		out.Paths = append(out.Paths, p.String())
	}
	slices.Sort(out.Paths)
	return out
}

// wholeMapsLeft returns paths, fields that left last-applied, with each
// replaced by the topmost map, struct or list that holds it, below the
// object's top level (never spec, data or metadata whole), that the new
// last-applied no longer has at all (stillHas is false: it left whole) and
// that holds none of the fields kept (a server default, the workload's
// state, a server-managed field, which a hand-over never takes): what
// kubectl hygiene handover records when it is given that path, so that a
// key a writer adds to the map later (kubectl set resources --requests
// after edit-last-applied dropped the whole resources) is the new writer's
// too, not an orphan (adversarial review: only the leaves that left were
// recorded). Never a metadata struct or anything in one (sharedMap), nor
// a key that last-applied still has, even with an empty value. Each path
// once, none inside another.
func wholeMapsLeft(paths []Path, kept []string, stillHas func(Path) bool) []Path {
	var out []Path
	taken := map[string]bool{}
	for _, p := range paths {
		lifted := p
		for i := 2; i < len(p); i++ {
			q := p[:i]
			key := q.String()
			if !sharedMap(q) && !stillHas(q) && !slices.ContainsFunc(kept, func(k string) bool { return within(k, key) }) {
				lifted = q.Append()
				break
			}
		}
		if key := lifted.String(); !taken[key] {
			taken[key] = true
			out = append(out, lifted)
		}
	}
	// A field recorded alone may lie inside a map recorded whole.
	return slices.DeleteFunc(out, func(p Path) bool {
		key := p.String()
		return slices.ContainsFunc(out, func(q Path) bool { k := q.String(); return k != key && within(key, k) })
	})
}

// sharedMap reports whether p is a metadata struct (the object's, a pod
// template's, a job template's, a claim template's) or lies inside one:
// labels and annotations, whose keys many writers add (rollout restart's
// restartedAt, a mesh's stamp), which a manifest without them hands over
// key by key, never whole.
func sharedMap(p Path) bool {
	return slices.ContainsFunc(p, func(pe fieldpath.PathElement) bool { return pe.FieldName != nil && *pe.FieldName == "metadata" })
}
