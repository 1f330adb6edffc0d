package generative_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The objects of soak seed 271126, sequence 413: alice's kubectl edit
// --save-config set the label gen.example.com/k-8 and saved the object as
// last-applied, the next apply was denied (replicas-reset), Flux's
// clean-up removed last-applied, and kubectl apply recorded its manifest,
// which leaves the label out, as the new last-applied.
const (
	forgottenManifest = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"frontend","labels":{"app":"frontend"}}}`
	forgottenApplied  = `{"metadata":{"name":"frontend","labels":{"app":"frontend"}},"spec":{"replicas":1}}`
	forgottenEdited   = `{"metadata":{"name":"frontend","labels":{"app":"frontend","gen.example.com/k-8":"7"}},"spec":{"replicas":1}}`
	forgottenSaved    = `{"metadata":{"name":"frontend","labels":{"app":"frontend","gen.example.com/k-8":"7"}}}`
	forgottenRobot    = `{"metadata":{"name":"frontend","labels":{"app":"frontend","gen.example.com/k-8":"9"}},"spec":{"replicas":1}}`
	// forgottenOther is a manifest with another value of the label, and
	// forgottenReverted the object after its apply.
	forgottenOther    = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"frontend","labels":{"app":"frontend","gen.example.com/k-8":"1"}}}`
	forgottenReverted = `{"metadata":{"name":"frontend","labels":{"app":"frontend","gen.example.com/k-8":"1"}},"spec":{"replicas":1}}`
)

// An orphaned-field finding of a label that a person's kubectl edit
// --save-config set is true once a write dropped the last-applied that
// recorded it (Flux's clean-up, a person's kubectl annotate of
// last-applied-configuration-) or recorded a manifest without it (kubectl
// apply set-last-applied): the next apply records a manifest without it, and no apply
// can remove it. It is allowed, never required, at that apply, at a later
// one and at a dry run, as long as the label keeps the edit's value. While
// the save's last-applied stands, the apply removes the label: false. A
// label a robot set, or set again, is never a person's orphan: false.
func TestJudgeApplyForgottenSave(t *testing.T) {
	label := framework.Path("metadata", "labels").Key("gen.example.com/k-8")
	warning := []framework.Reported{{Finding: framework.Orphan(label), Line: "Warning: [orphaned-field] metadata.labels[gen.example.com/k-8]"}}
	reverted := []framework.Reported{{Finding: framework.Finding{Action: framework.Warn, Rule: "apply-reverts-drift", Path: label.String()},
		Line: "Warning: [apply-reverts-drift] metadata.labels[gen.example.com/k-8]"}}
	editSave := step{Writer: "kubectl edit --save-config", As: alice, Kind: write, Args: []string{"edit", "deployment/frontend", "-o", "json", "--save-config"}, RewritesLastApplied: true}
	cleanUp := step{Writer: "Flux last-applied clean-up", As: flux, Kind: write, Args: []string{"patch", "deployment/frontend", "--type=json"}}
	relabel := step{Writer: "a label robot", As: robot, Kind: write, Args: []string{"patch", "deployment/frontend", "--type=merge"}}
	drop := step{Writer: dropLastApplied, As: alice, Kind: write, Args: []string{"annotate", "deployment/frontend", lastAppliedKey + "-"}}
	setLA := step{Writer: setLastApplied, As: alice, Kind: write, Args: []string{"apply", "set-last-applied", "-f", "-"}, Stdin: forgottenManifest, RewritesLastApplied: true}
	type write struct {
		s             step
		before, after func(t *testing.T) map[string]any
	}
	obj := func(o, la string) func(t *testing.T) map[string]any {
		return func(t *testing.T) map[string]any { return withLastApplied(t, o, la) }
	}
	saved := write{editSave, obj(forgottenApplied, forgottenManifest), obj(forgottenEdited, forgottenSaved)}
	cleaned := write{cleanUp, obj(forgottenEdited, forgottenSaved), obj(forgottenEdited, "")}
	tests := map[string]struct {
		writes        []write
		before, after func(t *testing.T) map[string]any
		dryRun        bool
		manifest      string
		got           []framework.Reported
		want          []string
	}{
		"the apply that records last-applied again, warned": {
			writes: []write{saved, cleaned},
			before: obj(forgottenEdited, ""), after: obj(forgottenEdited, forgottenManifest),
			got: warning,
		},
		"the apply that records last-applied again, silent": {
			writes: []write{saved, cleaned},
			before: obj(forgottenEdited, ""), after: obj(forgottenEdited, forgottenManifest),
		},
		"a person's kubectl annotate removed last-applied, warned": {
			writes: []write{saved, {drop, obj(forgottenEdited, forgottenSaved), obj(forgottenEdited, "")}},
			before: obj(forgottenEdited, ""), after: obj(forgottenEdited, forgottenManifest),
			got: warning,
		},
		"kubectl apply set-last-applied recorded a manifest without the label, warned": {
			writes: []write{saved, {setLA, obj(forgottenEdited, forgottenSaved), obj(forgottenEdited, forgottenManifest)}},
			before: obj(forgottenEdited, forgottenManifest), after: obj(forgottenEdited, forgottenManifest),
			got: warning,
		},
		"kubectl apply set-last-applied recorded a manifest without the label, silent": {
			writes: []write{saved, {setLA, obj(forgottenEdited, forgottenSaved), obj(forgottenEdited, forgottenManifest)}},
			before: obj(forgottenEdited, forgottenManifest), after: obj(forgottenEdited, forgottenManifest),
		},
		"kubectl apply set-last-applied recorded another value of the label: the apply that sets it says it discards the edit's": {
			writes: []write{saved, {setLA, obj(forgottenEdited, forgottenSaved), obj(forgottenEdited, forgottenOther)}},
			before: obj(forgottenEdited, forgottenOther), after: obj(forgottenReverted, forgottenOther),
			manifest: forgottenOther,
			got:      reverted,
		},
		"kubectl apply set-last-applied recorded another value of the label, silent": {
			writes: []write{saved, {setLA, obj(forgottenEdited, forgottenSaved), obj(forgottenEdited, forgottenOther)}},
			before: obj(forgottenEdited, forgottenOther), after: obj(forgottenReverted, forgottenOther),
			manifest: forgottenOther,
		},
		"kubectl apply set-last-applied recorded a manifest with the label: the apply removes it": {
			writes: []write{saved, {setLA, obj(forgottenEdited, forgottenSaved), obj(forgottenEdited, forgottenSaved)}},
			before: obj(forgottenEdited, forgottenSaved), after: obj(forgottenApplied, forgottenManifest),
			got:  warning,
			want: []string{"finding-true " + warning[0].Line},
		},
		"a later apply, warned": {
			writes: []write{saved, cleaned},
			before: obj(forgottenEdited, forgottenManifest), after: obj(forgottenEdited, forgottenManifest),
			got: warning,
		},
		"a dry run of the apply, warned": {
			writes: []write{saved, cleaned},
			before: obj(forgottenEdited, ""), dryRun: true,
			got: warning,
		},
		"the save's last-applied stands: the apply removes the label": {
			writes: []write{saved},
			before: obj(forgottenEdited, forgottenSaved), after: obj(forgottenApplied, forgottenManifest),
			got:  warning,
			want: []string{"finding-true " + warning[0].Line},
		},
		"a robot set the label again since the clean-up": {
			writes: []write{saved, cleaned, {relabel, obj(forgottenEdited, ""), obj(forgottenRobot, "")}},
			before: obj(forgottenRobot, ""), after: obj(forgottenRobot, forgottenManifest),
			got:  warning,
			want: []string{"finding-true " + warning[0].Line},
		},
		"a robot's label, last-applied dropped": {
			writes: []write{{relabel, obj(forgottenApplied, forgottenManifest), obj(forgottenRobot, forgottenManifest)},
				{cleanUp, obj(forgottenRobot, forgottenManifest), obj(forgottenRobot, "")}},
			before: obj(forgottenRobot, ""), after: obj(forgottenRobot, forgottenManifest),
			got:  warning,
			want: []string{"finding-true " + warning[0].Line},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{t: t, fields: map[string]setField{}, restored: func(fieldPath, map[string]any) bool { return false }}
			for _, w := range tc.writes {
				r.record(w.s, w.before(t), w.after(t))
			}
			apply := step{Writer: "kubectl apply", As: alice, Kind: clientSideApply, Args: []string{"apply", "-f", "-"}, Stdin: forgottenManifest}
			if tc.manifest != "" {
				apply.Stdin = tc.manifest
			}
			if tc.dryRun {
				apply.Kind = dryRunApply
				r.judgeDryRun(0, apply, tc.got, tc.before(t))
			} else {
				r.judgeApply(0, apply, framework.Result{Stdout: "deployment.apps/frontend configured"}, tc.got, tc.before(t), tc.after(t))
			}
			var failed []string
			for _, f := range r.failures {
				failed = append(failed, f.check+" "+f.detail)
			}
			if diff := cmp.Diff(tc.want, failed); diff != "" {
				t.Errorf("failed checks (-want +got):\n%s", diff)
			}
		})
	}
}

// A saved edit's field is the person's edit's again, removable by a fix
// (forgottenSave), when a write removed the last-applied that recorded it
// (Flux's clean-up); a rewrite of last-applied that drops it may be the
// person's hand-over (kubectl apply edit-last-applied): still
// unattributed, never removable (adversarial review of seed 281183's
// settlement).
func TestForgetSavesMarksOnlyADroppedRecord(t *testing.T) {
	const saved = `{"metadata":{"labels":{"team":"a"}}}`
	label := framework.Path("metadata", "labels").Key("team")
	withRecord := `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"metadata\":{\"labels\":{\"team\":\"a\"}}}"},"labels":{"team":"a"}}}`
	tests := map[string]struct {
		after             string
		unattributed, fix bool
	}{
		"last-applied removed (Flux's clean-up)": {
			after:        `{"metadata":{"labels":{"team":"a"}}}`,
			unattributed: true, fix: true,
		},
		"last-applied rewritten without it (a hand-over)": {
			after:        `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"},"labels":{"team":"a"}}}`,
			unattributed: true,
		},
		"last-applied kept": {after: withRecord},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{fields: map[string]setField{}, savedEdits: []savedEdit{{path: label, after: decodeJSON(t, saved)}}}
			r.forgetSaves(decodeJSON(t, withRecord), decodeJSON(t, tc.after))
			f := r.fields[label.String()]
			if f.unattributed != tc.unattributed || f.forgottenSave != tc.fix {
				t.Errorf("field %+v, want unattributed %v and forgottenSave %v", f, tc.unattributed, tc.fix)
			}
		})
	}
}
