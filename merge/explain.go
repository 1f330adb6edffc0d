package merge

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// Explanation describes every field of a stored object.
type Explanation struct {
	// Analysis holds drift, orphans and the last-applied state.
	Analysis *Analysis `json:"analysis"`
	// Fields lists every field, sorted by path, except status,
	// metadata.managedFields and the last-applied annotation.
	Fields []FieldInfo `json:"fields"`
}

// FieldInfo describes one field of a stored object.
type FieldInfo struct {
	// Path is the field.
	Path Path `json:"path"`
	// Value is its live value.
	Value any `json:"value"`
	// LastApplied is set when last-applied has the field.
	LastApplied bool `json:"lastApplied"`
	// Default is set when the field is a server default: last-applied does
	// not have it and only appliers own it (the write that applied the
	// manifest created it; see ownership.isApplier).
	Default bool `json:"default"`
	// Drift is set when last-applied has another value.
	Drift bool `json:"drift"`
	// Orphan is set when the next apply keeps the field though it is not in
	// last-applied.
	Orphan bool `json:"orphan"`
	// Owners are the field managers owning it, newest first.
	Owners []Owner `json:"owners,omitempty"`
}

// Explain describes every field of live with its owner, drift and orphan
// status.
func (a *Analyzer) Explain(live *unstructured.Unstructured) (*Explanation, error) {
	return verified(a, "explanation", func(a *Analyzer) (*Explanation, error) { return a.explain(live) })
}

func (a *Analyzer) explain(live *unstructured.Unstructured) (*Explanation, error) {
	an := newAnalysis(live, "live")
	info, original, parsed := a.lastAppliedInfo(live)
	if info.Status == LastAppliedMissing {
		info.KubectlMade = KubectlMade(live)
	}
	an.LastApplied = info
	an.AnnotationsBytes = AnnotationsSize(live)
	an.LastAppliedTooLarge = an.AnnotationsBytes > TooLargeThreshold
	ex := &Explanation{Analysis: an, Fields: []FieldInfo{}}
	if info.Status == LastAppliedInvalid || original != nil && !sameVersion(original, live) {
		// A last-applied of another version is compared with nothing (see
		// sameVersion): its fields are neither drift nor what makes the
		// others orphans.
		return ex, nil
	}
	var orig map[string]any
	if original != nil {
		orig = storedForm(live.GetKind(), original.Object)
	}
	tvs, err := a.fieldSets(a.writtenLastApplied(live.GetKind(), orig, parsed), written(live.Object))
	if err != nil {
		return nil, err
	}
	fs, err := a.sets(tvs, parsed.original(), nil)
	if err != nil {
		return nil, err
	}
	liveManaged := lazyManagedFields(live) // every field's owners are read below
	mfs, err := liveManaged.get()
	if err != nil {
		return nil, err
	}
	if original != nil {
		if err := a.drift(original, live, tvs[0], tvs[1], mfs, an); err != nil {
			return nil, err
		}
	}
	orphans, err := a.orphans(live.GetKind(), live.Object, live.Object, tvs[1], fs[1], fs[0], liveManaged, recordsObject(orig, live))
	if err != nil {
		return nil, err
	}
	if a.listsReplaced(live) {
		orphans = outsideLists(orig, orphans)
	}
	an.Orphans = withUndoRestored(withRemovePatches(live.Object, orphans))
	ex.Fields = a.fieldInfos(live, fs, an, mfs)
	return ex, nil
}

// withUndoRestored sets the RestoredByUndo of each fact that kubectl
// rollout undo's entry owns.
func withUndoRestored(facts []FieldFact) []FieldFact {
	for i := range facts {
		facts[i].RestoredByUndo = slices.ContainsFunc(facts[i].Owners, IsUndoEntry)
	}
	return facts
}

func (a *Analyzer) drift(lastApplied, live *unstructured.Unstructured, laTV, liveTV *typed.TypedValue, mfs []ManagedFields, an *Analysis) error {
	orig := storedForm(live.GetKind(), lastApplied.Object)
	cmp, err := laTV.Compare(liveTV)
	if err != nil {
		return fmt.Errorf("comparing last-applied and live: %w", err)
	}
	kind := live.GetKind()
	for _, p := range units(cmp.Modified.Union(cmp.Removed)) {
		la := at(orig, p)
		if serverManaged(p) || isEmpty(la.v) || sameAt(p, la, at(live.Object, p)) || followsSource(live.Object, p) {
			continue
		}
		an.Drift = append(an.Drift, a.fact(kind, p, factValues{live: at(live.Object, p), lastApplied: la}, owners(mfs, p)))
	}
	an.Drift = withRevertsRefused(orig, live.Object, live.Object, a.putBack(lastApplied, live, a.declaredOnly(live, an.Drift)))
	return nil
}

func (a *Analyzer) fieldInfos(live *unstructured.Unstructured, fs []*fieldpath.Set, an *Analysis, mfs []ManagedFields) []FieldInfo {
	drift, orphan := flagged(an.Drift), flagged(an.Orphans)
	kind := live.GetKind()
	ow := a.ownershipOf(mfs)
	out := []FieldInfo{}
	fs[1].Leaves().Iterate(func(fp fieldpath.Path) {
		p := Path(fp).Append()
		if serverManaged(p) && !isIdentity(p) {
			return
		}
		v := at(live.Object, p)
		ows := owners(mfs, p)
		inLastApplied := ownsPath(fs[0], nil, p, nil)
		out = append(out, FieldInfo{
			Path:        p,
			Value:       a.factValue(kind, p, v),
			LastApplied: inLastApplied,
			Default:     !inLastApplied && ow.onlyAppliers(ows),
			Drift:       drift(p),
			Orphan:      orphan(p),
			Owners:      ows,
		})
	})
	return out
}

// flagged reports whether a field is one of facts' fields or inside one:
// a FieldInfo's Drift and Orphan.
func flagged(facts []FieldFact) func(Path) bool {
	set := &fieldpath.Set{}
	for _, f := range facts {
		set.Insert(fieldpath.Path(f.Path))
	}
	return func(p Path) bool { return ownsPath(set, nil, p, nil) }
}

// WithoutDeclared returns ex without the drift and orphans at fields that
// ds declare owned: its analysis as Analysis.WithoutDeclared leaves it (a
// stored object, so no write and no writer) and its fields no longer
// marked Drift or Orphan where those facts were dropped. ex itself is
// returned, unchanged, when nothing is declared; otherwise a copy.
func (ex *Explanation) WithoutDeclared(ds []Declared) *Explanation {
	an := ex.Analysis.WithoutDeclared("", ds)
	if an == ex.Analysis {
		return ex
	}
	drift, orphan := flagged(an.Drift), flagged(an.Orphans)
	out := &Explanation{Analysis: an, Fields: slices.Clone(ex.Fields)}
	for i := range out.Fields {
		f := &out.Fields[i]
		f.Drift, f.Orphan = f.Drift && drift(f.Path), f.Orphan && orphan(f.Path)
	}
	return out
}

// isIdentity reports whether p is apiVersion, kind, metadata.name or
// metadata.namespace, which Explain lists although the server manages them.
func isIdentity(p Path) bool {
	s := p.String()
	return s == "apiVersion" || s == "kind" || s == "metadata.name" || s == "metadata.namespace"
}
