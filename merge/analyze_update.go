package merge

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// AnalyzeUpdate analyzes a write that turned old into new, as an admission
// webhook sees it. When last-applied changed, the write is an apply (or
// `set-last-applied`, `create/replace --save-config`): the analysis is the
// apply's, with the new last-applied as the manifest and new as the result.
// Otherwise it lists the imperative changes: fields that last-applied owns
// and that the write changed or removed, leaving them different from
// last-applied (none when the write drops last-applied). A caller that
// knows the write is an apply says so with AnalyzeClientSideApply or
// AnalyzeServerSideApply.
func (a *Analyzer) AnalyzeUpdate(old, new *unstructured.Unstructured) (*Analysis, error) {
	return verified(a, "update analysis", func(a *Analyzer) (*Analysis, error) { return a.analyzeUpdate(old, new) })
}

// updateAnalysis starts the analysis of a write that turned old into new:
// the state of old's last-applied and the size of new's annotations. It
// also returns old's last-applied (nil when there is none) and its parse.
func (a *Analyzer) updateAnalysis(old, new *unstructured.Unstructured) (*Analysis, *unstructured.Unstructured, *parsedLastApplied) {
	an := newAnalysis(new, "update")
	info, original, parsed := a.lastAppliedInfo(old)
	info.Replaced = LastAppliedReplaced(old, new)
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
	appliers, applyOwned, err := a.applyOwnedChanges(old, new, original)
	if err != nil {
		return nil, err
	}
	an.Appliers, an.ApplyOwnedChanges = appliers, applyOwned
	if original == nil || hadOld && !hasNew {
		// A write that drops last-applied (kubectl replace or edit of an
		// object without it, Flux's clean-up) leaves no values for the
		// next apply to put back: that apply patches its manifest in as
		// over an object made without one, and kubectl says so.
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
	if !sameVersion(lastApplied, new) {
		// The next apply of last-applied is computed in its version, not
		// in the one the write is seen in (see sameVersion).
		return []FieldFact{}, nil
	}
	kind := new.GetKind()
	original := storedForm(kind, lastApplied.Object)
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
	newMfs, oldMfsOnce := lazyManagedFields(new), lazyManagedFields(old) // decoded for the first change: most writes have none
	granular := granularIn(tvs[2])
	for _, p := range units(cmp.Modified.Union(cmp.Removed)) {
		la := f.at(original, p)
		if !owned.Has(fieldpath.Path(p)) || serverManaged(p) || isEmpty(la.v) || sameAt(p, f.at(new.Object, p), la) || followsSource(new.Object, p) {
			continue
		}
		mfs, err := newMfs.get()
		if err != nil {
			return nil, err
		}
		oldMfs, err := oldMfsOnce.get()
		if err != nil {
			return nil, err
		}
		if admissionChanged(oldMfs, mfs, granular, cmp.Modified, p) {
			continue
		}
		out = append(out, a.fact(kind, p, factValues{live: f.at(old.Object, p), result: f.at(new.Object, p), lastApplied: la}, owners(mfs, p)))
	}
	return withRevertsRefused(original, old.Object, new.Object, a.putBack(lastApplied, new, out)), nil
}

// followsSource reports whether p, a field of obj, is one the API server
// copies from another on every write (mirroredFrom: the pod spec's
// deprecated serviceAccount, from serviceAccountName) whose source obj
// has set: whatever the next apply writes at p, the server sets p back to
// the source's value, so a change of p is never put back by it (kubectl
// set serviceaccount under a manifest that writes the alias alone); the
// source's own change is reported at the source when last-applied owns
// it. Without a source the server copies p into it instead, and the
// apply's value stays. A stored object's drift (Explain) reads it the
// same way: the next apply of the alias is set back to the name.
func followsSource(obj map[string]any, p Path) bool {
	src, ok := mirroredFrom(obj, p)
	if !ok {
		return false
	}
	name, _ := at(obj, src).v.(string)
	return name != ""
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
		ownersKept(contentOwners(oldMfs, p, granular), contentOwners(mfs, p, granular), newestTime(mfs))
}

// ownersKept reports whether every owner in after is one in before with the
// same manager, operation, subresource and time, older than newest (the
// write's own time): no write took the field over between them. The API
// server sets an entry's time whenever its manager's write changes a
// field, so the writer's own entry has the newest time; times have whole
// seconds, so an owner as new as the write may be the writer itself (kubectl
// set image under kubectl apply's manager within the second of the apply),
// and then the change is the writer's.
func ownersKept(before, after []Owner, newest time.Time) bool {
	for _, o := range after {
		if !o.Time.Before(newest) || !slices.ContainsFunc(before, func(b Owner) bool {
			return b.Manager == o.Manager && b.Operation == o.Operation && b.Subresource == o.Subresource && b.Time.Equal(o.Time)
		}) {
			return false
		}
	}
	return true
}

// newestTime is the latest time of mfs' entries.
func newestTime(mfs []ManagedFields) time.Time {
	var t time.Time
	for _, mf := range mfs {
		if mf.Time.After(t) {
			t = mf.Time
		}
	}
	return t
}

// ChangedByAdmission reports whether a mutating webhook, not the write,
// changed the field p from old to new (admissionChanged: p is set in both
// and its managedFields owners, times included, are the same), as
// apply-hygiene's review asks of an annotation that kubectl edit
// --save-config recorded and a mesh injector re-stamped. Without
// managedFields in new, or when p is not set in both, it is false.
func ChangedByAdmission(old, new *unstructured.Unstructured, p Path) (bool, error) {
	before, after, newest, ok, err := ownersAcross(old, new, p)
	return ok && ownersKept(before, after, newest), err
}

// ownersAcross returns the owners of p (contentOwners) in old and in new
// and the time of the write (the newest of new's entries); ok is false
// when p is not set in both or new has no managedFields.
func ownersAcross(old, new *unstructured.Unstructured, p Path) (before, after []Owner, newest time.Time, ok bool, err error) {
	if !at(old.Object, p).ok || !at(new.Object, p).ok {
		return nil, nil, time.Time{}, false, nil
	}
	mfs, err := DecodeManagedFields(new)
	if err != nil || len(mfs) == 0 {
		return nil, nil, time.Time{}, false, err
	}
	oldMfs, err := DecodeManagedFields(old)
	if err != nil {
		return nil, nil, time.Time{}, false, err
	}
	return contentOwners(oldMfs, p, objectMetaMaps), contentOwners(mfs, p, objectMetaMaps), newestTime(mfs), true, nil
}

// objectMetaMaps reports whether p is metadata or its annotations or
// labels: maps of every kind's ObjectMeta, whatever its schema, so that an
// entry left with only the empty map it once wrote (kubectl apply's
// f:annotations once kubectl edit took last-applied from it) owns none of
// their keys (contentOwners).
func objectMetaMaps(p fieldpath.Path) bool {
	switch patternOf(Path(p)) {
	case "metadata", "metadata.annotations", "metadata.labels":
		return true
	}
	return false
}

// OwnersKeptButTheWriters reports whether the write from old to new left
// the owners of p (contentOwners) as they were but for the writer's own
// entry's time: the same managers, operations and subresources, none
// added or dropped, each with its old time or the write's (the newest of
// new's entries). Unlike ChangedByAdmission it cannot tell the writer's
// change of p from a mutating webhook's, when the writer's entry owned p
// already: apply-hygiene's review asks it only with what the write
// recorded in last-applied as the other witness. False when p is not set
// in both or new has no managedFields.
func OwnersKeptButTheWriters(old, new *unstructured.Unstructured, p Path) (bool, error) {
	before, after, newest, ok, err := ownersAcross(old, new, p)
	if !ok || err != nil || len(before) != len(after) {
		return false, err
	}
	for _, o := range after {
		if !slices.ContainsFunc(before, func(b Owner) bool {
			return b.Manager == o.Manager && b.Operation == o.Operation && b.Subresource == o.Subresource &&
				(b.Time.Equal(o.Time) || o.Time.Equal(newest))
		}) {
			return false, nil
		}
	}
	return true, nil
}
