package merge

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// An undo repair changes last-applied only where the undo restored
// something and only where it proves the restored value came from a
// manifest; a miss (the next apply warns about an orphan) beats a false
// write (the next apply deletes a field a tool or a person set, and with a
// template field rolls every pod).
//
// What an undo restores: kubectl's rollbackers replace spec.template, and
// for a Deployment metadata.annotations with the ReplicaSet's (keeping
// last-applied and the revision bookkeeping). Nothing else: minReadySeconds,
// replicas and every other field keep the current last-applied's values.
//
// What proves a restored value:
//   - the manifest of the restored revision, which a ControllerRevision
//     keeps in its annotations (StatefulSet, DaemonSet) when it describes
//     the restored template: each template field it has is the manifest's,
//     each it lacks is not;
//   - for a field the undo changed or removed, that last-applied has it
//     and only client-side appliers own its old value (managedFields of
//     the object before the undo): a manifest field, not one that kubectl
//     set/rollout/edit or a robot stamped. That proves the field, not the
//     restored value: a ReplicaSet keeps no manifest, so a Deployment's
//     repair writes the value of the revision the person chose, which
//     an allowed hand edit may have set (docs/rules.md,
//     stale-last-applied); where a ControllerRevision kept no manifest
//     of the restored template, last-applied keeps its value
//     (keptNoManifest);
//   - for a list element the undo adds that last-applied does not have,
//     that the replaced template was made by the apply of last-applied
//     right after the restored one, and by nothing else (adjacentApply):
//     that apply deleted the element, which it does only for an element
//     its previous last-applied had. That proves the element's key, not
//     its other fields (the restored element has what people and the
//     server added to it), so the repair writes the key alone: kubectl's
//     next apply then deletes the element when the manifest lacks it and
//     leaves its other fields alone when the manifest has it. A field
//     that is not a list element proves nothing this way (its value is
//     not proven, and writing its parent map would let the next apply
//     delete siblings a tool stamped). A restartedAt that a second undo
//     adds back has no such proof: the template it replaces was itself
//     restored by an undo.

// undoProof decides, path by path, what an undo repair may write.
type undoProof struct {
	old, new, original map[string]any
	// manifest is the restored revision's manifest, nil when no revision
	// kept one that describes the restored template.
	manifest map[string]any
	// owned tells, for a path, whether only client-side appliers own its
	// value in the object before the undo.
	owned func(Path) bool
	// appliedAt is when a client-side applier last wrote the object
	// before the undo, zero when unknown.
	appliedAt time.Time
	// adjacent: adjacentApply holds.
	adjacent bool
	// ownersKnown: the object before the undo came with its
	// managedFields (the webhook's); the audit's reconstruction has none,
	// so there owned tells only that a value equals last-applied's.
	ownersKnown bool
	// keptNoManifest: the restored revision is a ControllerRevision
	// (StatefulSet, DaemonSet), which copies the object's annotations when
	// it is made, and it kept no last-applied that describes its template:
	// no client-side apply made that template (a server-side apply, a
	// kubectl patch or set image did), so a value the undo restored is no
	// manifest's (soak seed 271126, sequence 018: a kubectl patch's image
	// written into last-applied).
	keptNoManifest bool
}

// repairedLastApplied returns original with the undo's restored paths
// changed as far as proof allows.
func (pr *undoProof) repairedLastApplied(paths []Path) map[string]any {
	out := runtimeDeepCopy(pr.original)
	for _, p := range paths {
		pr.repairPath(out, p)
	}
	return out
}

func (pr *undoProof) repairPath(out map[string]any, p Path) {
	o, n, l := at(pr.old, p), at(pr.new, p), at(pr.original, p)
	switch {
	case pr.manifest != nil && isTemplatePath(p):
		if at(pr.manifest, p).ok {
			setAt(out, p, pr.manifest, true)
		} else if l.ok {
			removeAt(out, p)
		}
	case o.ok: // changed or removed
		if !l.ok || !pr.owned(p) {
			return
		}
		if n.ok && pr.keptNoManifest {
			// The restored value is proven by nothing: the revision's
			// own annotations say no client-side apply made its
			// template (see keptNoManifest).
			return
		}
		if n.ok && !pr.addsNoUnprovenKey(p, n.v, l.v, o.v) {
			// The restored value has a key last-applied's lacks that
			// nothing proves a manifest's (a person's nodeSelector
			// entry, a matchExpressions in a labelSelector, both
			// single values in the schema): written, it would make
			// kubectl's next apply, whose strategic merge goes into
			// maps whatever the schema says, delete that key.
			return
		}
		if n.ok {
			setAt(out, p, pr.new, false)
		} else {
			removeAt(out, p)
		}
	case l.ok:
		// Added where last-applied has the path: last-applied keeps its
		// own value. The restored one may hold what a person or the
		// server set (an env var of `kubectl set env`, defaults), and
		// kubectl's next three-way merge reads last-applied's keys,
		// not its values.
	case pr.adjacent && isTemplatePath(p):
		setKeyAt(out, p, pr.new)
	}
}

// addsNoUnprovenKey reports whether restored, the value an undo restored
// at p, written over lastApplied, last-applied's value there, adds no map
// key, at any depth, that kubectl's next apply would delete (it deletes
// the keys of last-applied that its manifest lacks, inside any map) and
// that no proof makes a manifest's. A key is proven when it is what the
// API server defaults there (a fieldRef's apiVersion: deleted, it comes
// back) or when adjacentApply holds and old, the value before the undo,
// lacks it: that apply deleted it, which kubectl does only for a key of
// its previous last-applied (v1's nodeSelector key that v2 dropped). The
// latter needs old's managedFields: without them (the audit's
// reconstruction) a robot's patch that set the map back to last-applied's
// value right after the apply passes for the apply (an adversarial
// review), so the audit leaves such a key out, a miss. A
// list is replaced whole by the strategic merge when no merge key joins
// its elements, and every list that one joins is split into its elements
// before this (a unit of the schema), so what is inside a list is never
// deleted on its own.
func (pr *undoProof) addsNoUnprovenKey(p Path, restored, lastApplied, old any) bool {
	r, isMap := restored.(map[string]any)
	if !isMap {
		return true
	}
	l, ok := lastApplied.(map[string]any)
	if !ok {
		return false
	}
	o, _ := old.(map[string]any)
	for k, v := range r {
		q := pathTo(p, fieldName(k))
		if w, has := l[k]; has {
			if !pr.addsNoUnprovenKey(q, v, w, o[k]) {
				return false
			}
			continue
		}
		_, inOld := o[k]
		if !IsServerDefault(pr.new, q) && (!pr.adjacent || !pr.ownersKnown || inOld) {
			return false
		}
	}
	return true
}

func isTemplatePath(p Path) bool {
	return len(p) > 2 && patternOf(p[:2]) == "spec.template"
}

// newUndoProof gathers the proof for the undo from old to new that
// restored rev. A ControllerRevision's manifest counts only when it
// describes the restored template (matchesTemplate).
func (a *Analyzer) newUndoProof(rev revision, revs []revision, old, new, original *unstructured.Unstructured, changes []Path) (*undoProof, error) {
	pr := &undoProof{old: old.Object, new: new.Object, original: original.Object}
	if rev.lastApplied != "" && a.matchesTemplate(rev.lastApplied, new) {
		if err := json.Unmarshal([]byte(rev.lastApplied), &pr.manifest); err != nil {
			return nil, fmt.Errorf("decoding the last-applied of %s %s: %w", rev.kind, rev.name, err)
		}
	}
	mfs, err := DecodeManagedFields(old)
	if err != nil {
		return nil, err
	}
	pr.appliedAt, err = a.clientSideAppliedAt(mfs, new)
	if err != nil {
		return nil, err
	}
	pr.ownersKnown = len(mfs) > 0
	if len(mfs) == 0 {
		// No managedFields (the audit's reconstruction of the object
		// before the undo): only a value last-applied has counts.
		pr.owned = func(p Path) bool { return sameAt(p, at(pr.original, p), at(pr.old, p)) }
	} else {
		ow := a.ownershipOf(mfs)
		pr.owned = func(p Path) bool { return ow.onlyClientSideAppliers(owners(mfs, p)) }
	}
	pr.adjacent = rev.kind == "ReplicaSet" && adjacentApply(old, rev, revs, changes, pr)
	pr.keptNoManifest = rev.kind == "ControllerRevision" && pr.manifest == nil
	return pr, nil
}

// adjacentApply reports whether old's template was made from rev's by the
// apply of old's last-applied and by nothing else: old's revision is the
// one created right after rev held the newest number, it was never
// restored (an undo renumbers a ReplicaSet and records its numbers in
// revision-history), every template field in which it differs from rev
// and that it has is owned by client-side appliers alone — at least one —,
// and its ReplicaSet was created within appliedWindow after the last
// client-side apply.
//
// The last condition stands for the fields old lacks: a removal leaves no
// owner in managedFields, so the removal of a person's patch and the
// apply's look the same. The Deployment controller makes one ReplicaSet
// per sync, right after the apply; a later one means the controller
// waited (a `kubectl rollout pause`) and other writes may have been
// folded into the same revision: the pause, apply, patch, resume of an
// incident. A writer that does all that within the window is not told
// apart.
func adjacentApply(old *unstructured.Unstructured, rev revision, revs []revision, changes []Path, pr *undoProof) bool {
	current := currentRevision(old, revs)
	if current < 0 {
		return false
	}
	c := revs[current]
	if c.first != c.number || !slices.Contains(rev.numbers, c.number-1) {
		return false
	}
	if pr.appliedAt.IsZero() || c.created.Before(pr.appliedAt) || c.created.Sub(pr.appliedAt) > appliedWindow {
		return false
	}
	applied := 0
	for _, p := range changes {
		if !isTemplatePath(p) || !at(pr.old, p).ok {
			continue
		}
		if !at(pr.original, p).ok || !pr.owned(p) {
			return false
		}
		applied++
	}
	return applied > 0
}

// appliedWindow is how long after a client-side apply the Deployment
// controller's ReplicaSet may be created for adjacentApply to hold:
// managedFields times have a resolution of one second, and a busy
// controller takes a little more.
const appliedWindow = 2 * time.Second

// clientSideAppliedAt returns the newest time at which a client-side
// applier wrote, by the managedFields of the object before the undo, or
// of the object after it when those are unknown (the audit's
// reconstruction): the undo does not change the applier's entry.
func (a *Analyzer) clientSideAppliedAt(mfs []ManagedFields, after *unstructured.Unstructured) (time.Time, error) {
	if len(mfs) == 0 {
		var err error
		if mfs, err = DecodeManagedFields(after); err != nil {
			return time.Time{}, err
		}
	}
	ow := a.ownershipOf(mfs)
	var newest time.Time
	for _, mf := range mfs {
		if mf.Subresource == "" && ow.onlyClientSideAppliers([]Owner{mf.Owner}) && mf.Time.After(newest) {
			newest = mf.Time
		}
	}
	return newest, nil
}

// setKeyAt writes into dst, at p, the part of src's list element at p
// that names it: the value of a set, the single key field of a keyed
// list. It writes nothing for any other path, nor for an element whose
// key has several fields (a port's protocol may be a default).
func setKeyAt(dst map[string]any, p Path, src map[string]any) {
	if len(p) == 0 {
		return
	}
	last := p[len(p)-1]
	switch {
	case last.Value != nil:
		setAt(dst, p, src, false)
	case last.Key != nil && len(*last.Key) == 1:
		v, ok := lookup(src, p)
		elem, isMap := v.(map[string]any)
		name := (*last.Key)[0].Name
		if !ok || !isMap || elem[name] == nil {
			return
		}
		setValueAt(dst, p, src, false, map[string]any{name: deepCopyJSON(elem[name])})
	}
}

// setAt sets p in dst to src's value at p, creating the maps on the way.
// A list element on the way that dst lacks is copied whole from src when
// whole is set (src is a manifest); otherwise p is left alone (its parts
// would be a partial element). A list element that p adds goes where src has it relative to
// the elements dst shares with src.
func setAt(dst map[string]any, p Path, src map[string]any, whole bool) {
	setValueAt(dst, p, src, whole, nil)
}

// setValueAt is setAt that writes v, when not nil, at p instead of src's
// value; src still gives the way and the position of a new element.
func setValueAt(dst map[string]any, p Path, src map[string]any, whole bool, v any) {
	var cur any = dst
	var srcCur any = src
	for i, pe := range p {
		srcNext, _, ok := step(srcCur, pe)
		if !ok {
			return
		}
		last := i == len(p)-1
		if last && v != nil {
			srcNext = v
		}
		if pe.FieldName != nil {
			m, ok := cur.(map[string]any)
			if !ok {
				return
			}
			next, present := m[*pe.FieldName]
			if last {
				m[*pe.FieldName] = deepCopyJSON(srcNext)
				return
			}
			if !present || next == nil {
				next = map[string]any{}
				m[*pe.FieldName] = next
			}
			cur, srcCur = next, srcNext
			continue
		}
		next, idx, present := step(cur, pe)
		if !present {
			if last || whole {
				insertElement(dst, p[:i], pe, srcCur, srcNext)
			}
			return
		}
		if last {
			l, _ := cur.([]any)
			l[idx] = deepCopyJSON(srcNext)
			return
		}
		cur, srcCur = next, srcNext
	}
}

// insertElement adds elem, the element pe of srcList, to the list at
// parent in dst, after the last element that precedes it in srcList.
func insertElement(dst map[string]any, parent Path, pe fieldpath.PathElement, srcList, elem any) {
	l, _ := lookup(dst, parent)
	list, _ := l.([]any)
	sl, _ := srcList.([]any)
	pos := slices.IndexFunc(sl, func(x any) bool { return sameElement(pe, x, elem) })
	insert := 0
	for j, x := range list {
		if k := slices.IndexFunc(sl, func(y any) bool { return sameElement(pe, x, y) }); k >= 0 && k < pos {
			insert = j + 1
		}
	}
	list = slices.Insert(slices.Clone(list), insert, deepCopyJSON(elem))
	replaceAt(dst, parent, list)
}

// sameElement reports whether x and y are the same element of a list
// whose elements pe names: by their key fields, or by value.
func sameElement(pe fieldpath.PathElement, x, y any) bool {
	xm, ok1 := x.(map[string]any)
	ym, ok2 := y.(map[string]any)
	if pe.Key == nil || !ok1 || !ok2 {
		return jsonEqual(x, y)
	}
	for _, f := range *pe.Key {
		if !jsonEqual(xm[f.Name], ym[f.Name]) {
			return false
		}
	}
	return true
}

// replaceAt sets the value at p in dst, whose parents exist.
func replaceAt(dst map[string]any, p Path, v any) {
	withParent(dst, p, func(m map[string]any, key string) { m[key] = v },
		func(list []any, idx int) { list[idx] = v })
}

// removeAt removes p from dst, when it is there.
func removeAt(dst map[string]any, p Path) {
	withParent(dst, p, func(m map[string]any, key string) { delete(m, key) },
		func(list []any, idx int) { replaceAt(dst, p[:len(p)-1], slices.Delete(slices.Clone(list), idx, idx+1)) })
}

// withParent finds the map or list in dst that holds p's last element and
// calls inMap with the map and key or inList with the list and index;
// neither when p is empty or its parent is not there.
func withParent(dst map[string]any, p Path, inMap func(map[string]any, string), inList func([]any, int)) {
	if len(p) == 0 {
		return
	}
	parent, ok := lookup(dst, p[:len(p)-1])
	if !ok {
		return
	}
	pe := p[len(p)-1]
	if pe.FieldName != nil {
		if m, ok := parent.(map[string]any); ok {
			inMap(m, *pe.FieldName)
		}
		return
	}
	if _, idx, ok := step(parent, pe); ok {
		inList(parent.([]any), idx)
	}
}

func deepCopyJSON(v any) any { return runtime.DeepCopyJSONValue(v) }
