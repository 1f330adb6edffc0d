package generative_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The objects around kubectl rollout undo --dry-run=server of a
// Deployment that kubectl apply applied with image a:1 and kubectl set
// image moved to a:2.
const (
	dryUndoLastApplied = `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`
	dryUndoBefore      = `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:2"}]}}}}`
	dryUndoUndone      = `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`
)

// A server-side dry run of kubectl rollout undo writes nothing and must
// pass: it may be told what the undo would leave stale, nothing else; it
// records no field and is no undo of the sequence (a repair of
// last-applied after it is proven by no undo).
func TestJudgeDryRunUndo(t *testing.T) {
	image := framework.ContainersPath.Named("app").Key("image")
	finding := func(action, rule string) []framework.Reported {
		return []framework.Reported{{Finding: framework.Finding{Action: action, Rule: rule, Path: image.String()}, Line: "[" + rule + "] " + image.String()}}
	}
	tests := map[string]struct {
		got           []framework.Reported
		before, after func(t *testing.T) map[string]any
		want          []string
	}{
		"nothing said": {},
		"told that the undo would leave last-applied stale": {got: finding(framework.Warn, "stale-last-applied")},
		"warned of an edit": {
			got:  finding(framework.Warn, "imperative-edit"),
			want: []string{"finding-true false warning"},
		},
		"denied": {
			got:    finding(framework.Deny, "imperative-edit"),
			before: func(*testing.T) map[string]any { return nil },
			want:   []string{"must-pass false denial"},
		},
		"the template changed": {
			after: func(t *testing.T) map[string]any { return withLastApplied(t, dryUndoUndone, dryUndoLastApplied) },
			want:  []string{"dry-run-writes-nothing "},
		},
		"last-applied changed": {
			after: func(t *testing.T) map[string]any { return withLastApplied(t, dryUndoBefore, dryUndoBefore) },
			want:  []string{"dry-run-writes-nothing "},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{t: t, fields: map[string]setField{}}
			s := step{Writer: "kubectl rollout undo --dry-run=server", As: alice, Kind: dryRunUndo, Args: []string{"rollout", "undo", "deployment/web", "--dry-run=server"}}
			before := withLastApplied(t, dryUndoBefore, dryUndoLastApplied)
			if tc.before != nil {
				before = tc.before(t)
			}
			after := withLastApplied(t, dryUndoBefore, dryUndoLastApplied)
			if tc.after != nil {
				after = tc.after(t)
			}
			r.judgeWrite(0, s, framework.Result{}, tc.got, before, after)
			r.wantFailed(t, tc.want)
			r.record(s, before, after)
			r.noteUndo(s, before, after)
			if len(r.fields) > 0 || r.undone {
				t.Errorf("after the dry run, fields %v and undone %v, want none and false", r.fields, r.undone)
			}
		})
	}
}

// oc rollout undo runs kubectl's undo under the file name oc; the script
// makes that name for kubectl.
func TestScriptOfOc(t *testing.T) {
	steps := []step{{Writer: ocUndo, As: alice, Kind: undo, Args: []string{"rollout", "undo", "deployment/web"}, Binary: "oc"}}
	want := []string{
		"",
		"# 1. oc rollout undo, as alice",
		"# (wait until the controller has recorded the current revision)",
		`ln -sf "$(command -v kubectl)" ./oc`,
		"./oc --as=alice -n demo rollout undo deployment/web",
		"",
	}
	lines := strings.Split(script(steps), "\n")
	if diff := cmp.Diff(want, lines[len(lines)-len(want):]); diff != "" {
		t.Errorf("script (-want +got):\n%s", diff)
	}
	if got := steps[0].command(); got != "oc rollout undo deployment/web" {
		t.Errorf("command() = %q, want oc rollout undo deployment/web", got)
	}
}

// The objects of generative seed 281140, sequence 010: bob's exempt undo
// of a StatefulSet removed the template annotation gen.example.com/t that
// last-applied has, kubectl apply set-last-applied recorded a manifest
// that still has it (last-applied's text changed, not that value), and
// Argo CD's apply put it back.
const (
	setLAApplied  = `{"metadata":{"labels":{"a":"1"}},"spec":{"template":{"metadata":{"annotations":{"gen.example.com/t":"10"}}}}}`
	setLARecorded = `{"metadata":{"labels":{"a":"2"}},"spec":{"template":{"metadata":{"annotations":{"gen.example.com/t":"10"}}}}}`
	setLAWithout  = `{"metadata":{"labels":{"a":"2"}}}`
	setLAUndone   = `{"metadata":{"labels":{"a":"1"}},"spec":{"template":{"metadata":{}}}}`
	setLAPutBack  = `{"metadata":{"labels":{"a":"2"}},"spec":{"template":{"metadata":{"annotations":{"gen.example.com/t":"10"}}}}}`
)

// kubectl apply set-last-applied writes nothing but last-applied: a field
// an undo removed stays drift while the recorded last-applied has a value
// there, and the next apply may say it puts it back (a person's must);
// once the record leaves it out, it is no drift.
func TestSetLastAppliedKeepsDrift(t *testing.T) {
	annotation := framework.TemplatePath.Key("metadata").Key("annotations").Key("gen.example.com/t")
	reverted := []framework.Reported{{Finding: framework.Finding{Action: framework.Warn, Rule: "apply-reverts-drift", Path: annotation.String()},
		Line: "Warning: [apply-reverts-drift] " + annotation.String()}}
	undoStep := step{Writer: "kubectl rollout undo (exempt)", As: bob, Kind: undo, Args: []string{"rollout", "undo", "statefulset/web"}}
	setLA := step{Writer: setLastApplied, As: alice, Kind: write, Args: []string{"apply", "set-last-applied", "-f", "-"}, RewritesLastApplied: true}
	tests := map[string]struct {
		recorded string
		as       who
		got      []framework.Reported
		want     []string
	}{
		"recorded with the value, Argo CD's apply warned":  {recorded: setLARecorded, as: argocd, got: reverted},
		"recorded with the value, a person's apply warned": {recorded: setLARecorded, as: alice, got: reverted},
		"recorded with the value, a person's apply silent": {
			recorded: setLARecorded, as: alice,
			want: []string{"apply-reverts-drift-reported miss"},
		},
		"recorded without it: no drift": {
			recorded: setLAWithout, as: alice, got: reverted,
			want: []string{"finding-true false warning"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{t: t, fields: map[string]setField{}, restored: func(fieldPath, map[string]any) bool { return false }}
			r.record(undoStep, withLastApplied(t, setLAApplied, setLAApplied), withLastApplied(t, setLAUndone, setLAApplied))
			r.record(setLA, withLastApplied(t, setLAUndone, setLAApplied), withLastApplied(t, setLAUndone, tc.recorded))
			apply := step{Writer: "kubectl apply", As: tc.as, Kind: clientSideApply, Args: []string{"apply", "-f", "-"}, Stdin: setLAPutBack}
			r.judgeApply(0, apply, framework.Result{Stdout: "statefulset.apps/web configured"}, tc.got,
				withLastApplied(t, setLAUndone, tc.recorded), withLastApplied(t, setLAPutBack, setLAPutBack))
			r.wantFailed(t, tc.want)
		})
	}
}

// The objects of generative seed 37964, sequence 000: a kubectl replace
// of the manifest dropped Helm's annotation, and a rollout undo put it
// back from the older ReplicaSet (kubectl's undo of a Deployment copies
// the revision's annotations).
const (
	undoApplied  = `{"metadata":{"labels":{"a":"1"}}}`
	undoRestored = `{"metadata":{"labels":{"a":"1"},"annotations":{"meta.helm.sh/release-name":"gen"}}}`
)

// A field that kubectl's rollout undo restored is a person's: an apply
// that leaves it out must call it orphaned. oc rollout undo writes under
// the field manager oc, which apply-hygiene counts as a person's only when
// configured (--person-field-managers; docs/merge.md lists kubectl's
// names): managedFields then give the field to a tool, and a finding of
// it is allowed, never required (generative seed 37964, sequence 000,
// steps 19 and 25).
func TestJudgeOrphanOfOcUndo(t *testing.T) {
	annotation := framework.Path("metadata", "annotations").Key("meta.helm.sh/release-name")
	orphaned := []framework.Reported{{Finding: framework.Finding{Action: framework.Warn, Rule: "orphaned-field", Path: annotation.String()},
		Line: "Warning: [orphaned-field] " + annotation.String()}}
	tests := map[string]struct {
		binary string
		got    []framework.Reported
		want   []string
	}{
		"kubectl's undo, warned": {got: orphaned},
		"kubectl's undo, silent": {want: []string{"orphaned-field-reported miss"}},
		"oc's undo, warned":      {binary: "oc", got: orphaned},
		"oc's undo, silent":      {binary: "oc"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{t: t, fields: map[string]setField{}, restored: func(fieldPath, map[string]any) bool { return false }}
			undoStep := step{Writer: "kubectl rollout undo", As: alice, Kind: undo, Args: []string{"rollout", "undo", "deployment/web"}, Binary: tc.binary}
			r.record(undoStep, withLastApplied(t, undoApplied, undoApplied), withLastApplied(t, undoRestored, undoApplied))
			apply := step{Writer: "kubectl apply", As: alice, Kind: clientSideApply, Args: []string{"apply", "-f", "-"}, Stdin: undoApplied}
			r.judgeApply(0, apply, framework.Result{Stdout: "deployment.apps/web configured"}, tc.got,
				withLastApplied(t, undoRestored, undoApplied), withLastApplied(t, undoRestored, undoApplied))
			r.wantFailed(t, tc.want)
		})
	}
}

// The objects of generative seed 281142, sequence 001, steps 22–25: no
// last-applied (a kubectl replace dropped it), bob's rollout undo put
// image a:1 back, a server-side apply of a manifest with a:1 followed,
// and a person's client-side apply of a:3.
const (
	heldMoved   = `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:2"}]}}}}`
	heldUndone  = `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`
	heldApplied = `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:3"}]}}}}`
)

// A value that a person's kubectl apply --server-side (manager kubectl)
// applied is that manifest's, whoever wrote it first: kubectl's Apply
// entry owns it beside the undo's, so a client-side apply that changes it
// changes a manifest's value, and a warning of it is allowed, never
// required. Another tool's server-side apply of it is no person's
// manifest: the client-side apply discards what that tool holds and must
// say so (generative seed 281142, sequence 001, step 25).
func TestJudgeRevertOfAValueAServerSideApplyHeld(t *testing.T) {
	image := framework.ContainersPath.Named("app").Key("image")
	reverted := []framework.Reported{{Finding: framework.Finding{Action: framework.Warn, Rule: "apply-reverts-drift", Path: image.String()},
		Line: "Warning: [apply-reverts-drift] " + image.String()}}
	tests := map[string]struct {
		ssa  *step
		got  []framework.Reported
		want []string
	}{
		"no server-side apply, silent": {want: []string{"apply-reverts-drift-reported miss"}},
		"no server-side apply, warned": {got: reverted},
		"kubectl's server-side apply, silent": {
			ssa: &step{Writer: "kubectl apply --server-side", As: alice, Kind: serverSideApply, Args: []string{"apply", "--server-side", "-f", "-"}, Stdin: heldUndone},
		},
		"kubectl's server-side apply, warned": {
			ssa: &step{Writer: "kubectl apply --server-side", As: alice, Kind: serverSideApply, Args: []string{"apply", "--server-side", "-f", "-"}, Stdin: heldUndone},
			got: reverted,
		},
		"Argo CD's server-side apply, silent": {
			ssa:  &step{Writer: "Argo CD server-side apply", As: argocd, Kind: serverSideApply, Manager: "argocd-controller", Stdin: heldUndone},
			want: []string{"apply-reverts-drift-reported miss"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{t: t, fields: map[string]setField{}, restored: func(fieldPath, map[string]any) bool { return false }}
			undoStep := step{Writer: "kubectl rollout undo (exempt)", As: bob, Kind: undo, Args: []string{"rollout", "undo", "deployment/web", "--to-revision=1"}}
			r.record(undoStep, withLastApplied(t, heldMoved, ""), withLastApplied(t, heldUndone, ""))
			if tc.ssa != nil {
				r.record(*tc.ssa, withLastApplied(t, heldUndone, ""), withLastApplied(t, heldUndone, ""))
			}
			apply := step{Writer: "kubectl apply", As: alice, Kind: clientSideApply, Args: []string{"apply", "-f", "-"}, Stdin: heldApplied}
			r.judgeApply(0, apply, framework.Result{Stdout: "deployment.apps/web configured"}, tc.got,
				withLastApplied(t, heldUndone, ""), withLastApplied(t, heldApplied, heldApplied))
			r.wantFailed(t, tc.want)
		})
	}
}
