package merge

import (
	"fmt"
	"slices"

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

func (a *Analyzer) analyzeUpdate(old, new *unstructured.Unstructured) (*Analysis, error) {
	an := newAnalysis(new, "update")
	info, original, parsed := a.lastAppliedInfo(old)
	an.LastApplied = info
	an.AnnotationsBytes = AnnotationsSize(new)
	an.LastAppliedTooLarge = an.AnnotationsBytes > TooLargeThreshold
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
	an := newAnalysis(new, "update")
	info, original, parsed := a.lastAppliedInfo(old)
	an.LastApplied = info
	an.AnnotationsBytes = AnnotationsSize(new)
	an.LastAppliedTooLarge = an.AnnotationsBytes > TooLargeThreshold
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
	listsReplaced := a.listsReplaced(in.live)
	// A Secret as stored, as analyzeApply compares it: a manifest's
	// stringData.password is the data.password its reverts name.
	in.original = secretData(in.kind, in.original)
	in.manifest = &unstructured.Unstructured{Object: secretData(in.kind, in.manifest.Object)}
	in.result = &unstructured.Unstructured{Object: secretData(in.kind, in.result.Object)}
	an.Reverts = withoutAdmissionRemovals(an.Reverts, in, listsReplaced)
	reverts, err := a.withoutAdmissionChanges(an.Reverts, in, listsReplaced)
	if err != nil {
		return nil, err
	}
	an.Reverts = reverts
	return an, nil
}

// withoutAdmissionChanges drops the reverts of a field that the result
// still has, with another value, when the apply's patch cannot have
// touched it and the write did not take it over: neither the previous
// last-applied nor the manifest has it (nor sets it or an enclosing field
// to null, nor, when listsReplaced, holds the list it is in), and its
// owners in the result are its owners in live. The API server gives a
// write's manager every field the write itself changed before mutating
// admission, so a value that changed with its owners kept was changed by
// a mutating webhook after that (a mesh injector re-stamping its
// annotation on every write, after kubectl rollout undo copied the
// ReplicaSet's stamp under the manager kubectl), not by the apply. Owners
// are contentOwners: kubectl apply's empty f:annotations of live owns the
// map as it was, not the stamp in it, so its f:annotations of the result
// (the apply added last-applied) changes no owner of the stamp. A result
// without managedFields tells nothing and drops nothing.
func (a *Analyzer) withoutAdmissionChanges(reverts []FieldFact, in applyInput, listsReplaced bool) ([]FieldFact, error) {
	if len(reverts) == 0 {
		return reverts, nil
	}
	resultMfs, err := DecodeManagedFields(in.result)
	if err != nil || len(resultMfs) == 0 {
		return reverts, err
	}
	liveMfs, err := DecodeManagedFields(in.live)
	if err != nil {
		return nil, err
	}
	tvs, err := a.fieldSets(stored(in.result.Object))
	if err != nil {
		return nil, err
	}
	granular := granularIn(tvs[0])
	out := []FieldFact{}
	for _, f := range reverts {
		replacedList := listsReplaced && (inList(in.original, f.Path) || inList(in.manifest.Object, f.Path))
		untouched := !at(in.original, f.Path).ok && !at(in.manifest.Object, f.Path).ok &&
			!nulledIn(in.manifest.Object, f.Path) && !replacedList
		if untouched && at(in.result.Object, f.Path).ok && sameOwners(contentOwners(liveMfs, f.Path, granular), contentOwners(resultMfs, f.Path, granular)) {
			continue
		}
		out = append(out, f)
	}
	return out, nil
}

// sameOwners reports whether a and b name the same managers with the
// same operations and subresources, whatever their times.
func sameOwners(a, b []Owner) bool {
	key := func(o Owner) string { return o.Manager + "\x00" + o.Operation + "\x00" + o.Subresource }
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, o := range a {
		seen[key(o)]++
	}
	for _, o := range b {
		if seen[key(o)] == 0 {
			return false
		}
		seen[key(o)]--
	}
	return true
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
	var mfs, oldMfs []ManagedFields // decoded for the first change: most writes have none
	granular := granularIn(tvs[2])
	for _, p := range units(cmp.Modified.Union(cmp.Removed)) {
		la := f.at(original, p)
		if !owned.Has(fieldpath.Path(p)) || serverManaged(p) || isEmpty(la.v) || sameAt(p, f.at(new.Object, p), la) {
			continue
		}
		if mfs == nil {
			if mfs, err = DecodeManagedFields(new); err != nil {
				return nil, err
			}
			if oldMfs, err = DecodeManagedFields(old); err != nil {
				return nil, err
			}
		}
		if admissionChanged(oldMfs, mfs, granular, cmp.Modified, p) {
			continue
		}
		out = append(out, a.fact(kind, p, factValues{live: f.at(old.Object, p), result: f.at(new.Object, p), lastApplied: la}, owners(mfs, p)))
	}
	return a.putBack(lastApplied, new, out), nil
}

// admissionChanged reports whether the write's change of p is a mutating
// webhook's: the API server tracks a write's fields before mutating
// admission, so a field the write itself changed is its manager's (the
// entry, with the write's time), and a field still set (modified) whose
// owners are those of old, times included (ownersKept), was changed after
// that by a webhook (a mesh injector stamping every write), not by the
// writer: no entry, or one of an earlier write (kubectl rollout undo's,
// which copied an earlier stamp under the manager kubectl). Owners are those
// of what p holds (contentOwners): an entry that owns a granular map as an
// empty leaf (kubectl apply's f:annotations once another manager took
// last-applied over) owns the map, not the keys others put in it. A
// removed field is nobody's either way, and an object without
// managedFields tells nothing.
func admissionChanged(oldMfs, mfs []ManagedFields, granular func(fieldpath.Path) bool, modified *fieldpath.Set, p Path) bool {
	return len(mfs) > 0 && modified.Has(fieldpath.Path(p)) &&
		ownersKept(contentOwners(oldMfs, p, granular), contentOwners(mfs, p, granular))
}

// ownersKept reports whether every owner in after is one in before with the
// same manager, operation, subresource and time: no write took the field
// over between them. The API server sets an entry's time whenever its
// manager's write changes a field, so the writer's own entry has a new time.
func ownersKept(before, after []Owner) bool {
	for _, o := range after {
		if !slices.ContainsFunc(before, func(b Owner) bool {
			return b.Manager == o.Manager && b.Operation == o.Operation && b.Subresource == o.Subresource && b.Time.Equal(o.Time)
		}) {
			return false
		}
	}
	return true
}

// ChangedByAdmission reports whether a mutating webhook, not the write,
// changed the field p from old to new (admissionChanged: p is set in both
// and its managedFields owners, times included, are the same), as
// apply-hygiene's review asks of an annotation that kubectl edit
// --save-config recorded and a mesh injector re-stamped. Without
// managedFields in new, or when p is not set in both, it is false.
func ChangedByAdmission(old, new *unstructured.Unstructured, p Path) (bool, error) {
	if !at(old.Object, p).ok || !at(new.Object, p).ok {
		return false, nil
	}
	mfs, err := DecodeManagedFields(new)
	if err != nil || len(mfs) == 0 {
		return false, err
	}
	oldMfs, err := DecodeManagedFields(old)
	if err != nil {
		return false, err
	}
	return ownersKept(contentOwners(oldMfs, p, nil), contentOwners(mfs, p, nil)), nil
}
