package realworld_test

import "sort"

// The truth model: what a correct tool reports, from the fields the harness
// planted and the objects it reads, never from what apply-hygiene says.

// afterApply is what a correct tool reports for an apply that turned
// before into after, for each planted field p:
//
//   - an orphan when p is still live after the apply and is in neither the
//     manifest nor the previous last-applied;
//   - a revert when p had drifted (its live value differed from the
//     previous last-applied: kubectl's --overwrite=false conflict) and the
//     apply changed or removed it.
func (l *life) afterApply(before, after map[string]any) expectation {
	la := lastApplied(before)
	var want []finding
	for _, p := range l.sortedPlants() {
		_, live := p.Lookup(after)
		_, inManifest := p.Lookup(l.manifest)
		_, inLastApplied := p.Lookup(la)
		if live && !inManifest && !inLastApplied {
			want = append(want, orphan(p))
		}
		drifted := !sameAt(p, before, la)
		if drifted && !sameAt(p, before, after) {
			want = append(want, revert(p))
		}
	}
	return expectation{Want: want}
}

// settle forgets the planted fields that the apply took over (they are in
// the manifest now) or removed.
func (l *life) settle(after map[string]any) {
	for key, p := range l.planted {
		_, live := p.Lookup(after)
		_, inManifest := p.Lookup(l.manifest)
		if !live || inManifest {
			delete(l.planted, key)
		}
	}
}

// plant records a field that a command set outside apply.
func (l *life) plant(p fieldPath) {
	if l.planted == nil {
		l.planted = map[string]fieldPath{}
	}
	l.planted[p.String()] = p
}

// sortedPlants returns the planted fields in path order.
func (l *life) sortedPlants() []fieldPath {
	keys := make([]string, 0, len(l.planted))
	for k := range l.planted {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]fieldPath, len(keys))
	for i, k := range keys {
		out[i] = l.planted[k]
	}
	return out
}

// afterUndo is what a correct tool may report for a rollout undo that
// turned the pod template of before into that of after: never a denial;
// a stale-last-applied warning (with a repair) when last-applied differs
// from the restored template on a field the undo changed. It returns the
// fields the undo changed.
func afterUndo(before, after map[string]any) (expectation, []fieldPath) {
	tb, _ := templatePath.Lookup(before)
	ta, _ := templatePath.Lookup(after)
	changed := changedPaths(templatePath, tb, ta)
	la := lastApplied(before)
	var e expectation
	for _, p := range changed {
		if !sameAt(p, la, after) {
			e.Allowed = []finding{{Action: warn, Rule: "stale-last-applied"}}
		}
	}
	return e, changed
}
