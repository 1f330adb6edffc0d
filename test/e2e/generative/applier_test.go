package generative_test

import "github.com/google/go-cmp/cmp"

// appliedUnderItsName are the orphans that a person's write under
// kubectl apply's field manager (kubectl set image
// --field-manager=kubectl-client-side-apply) may report when it leaves
// last-applied as it was: the fields a person set outside apply that are
// live after it and in neither last-applied nor, therefore, the manifest
// of an apply. The webhook sees what kubectl apply of the manifest
// last-applied records sends when something drifted, behind a mutating
// webhook that rewrites what the apply puts back (docs/rules.md): nobody
// can tell the two apart, and each finding's claim (a person set the
// field, no apply will remove it, the printed command does) holds for the
// object whatever the write was. Allowed, never required: the person ran
// no apply (soak seed 271126, sequence 494: kubectl set image under kubectl
// apply's name over an image that bob's exempt undo had moved away from
// last-applied, with alice's kubectl annotate annotation live).
func (r *runner) appliedUnderItsName(s step, before, effect map[string]any) []fieldPath {
	la := manifestUnderItsName(s, before, effect)
	if la == nil {
		return nil
	}
	return truthOfApply(r.planted(false), r.appliedByPeople(), la, before, effect).orphans
}

// manifestUnderItsName is the manifest of the apply that a write under
// kubectl apply's field manager leaving last-applied as it was may be
// (last-applied's own), or nil for any other write. A finding the apply
// of that manifest may report is allowed, never required: the orphans of
// appliedUnderItsName, and replicas-autoscaled when the manifest sets
// replicas under kubectl autoscale's autoscaler (autoscaledTrue;
// generative seed 281149, sequence 010: finding 35).
func manifestUnderItsName(s step, before, effect map[string]any) map[string]any {
	la := lastApplied(before)
	if !s.namesApplier() || la == nil || !cmp.Equal(la, lastApplied(effect)) {
		return nil
	}
	return la
}
