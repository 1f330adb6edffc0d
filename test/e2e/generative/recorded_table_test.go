package generative_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// An undo's field that managedFields give only to entries recording
// last-applied (kubectl rollout undo and kubectl apply set-last-applied
// share the entry named kubectl) reads as the record's: an apply that
// leaves it orphaned may say so, and need not. Owned by any other entry
// too, or set by anything but an undo, it must be reported.
func TestJudgeApplyOfAnUndoUnderTheRecord(t *testing.T) {
	const stamp = "reloader.stakater.com/last-reloaded-from"
	q := framework.Path("spec", "template", "metadata", "annotations").Key(stamp)
	live := `{"metadata":{"name":"frontend","labels":{"app":"frontend","gen.example.com/prune-set":"gen"}},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"frontend"}},` +
		`"template":{"metadata":{"annotations":{"` + stamp + `":"configmap-1"}}}}}`
	record := map[string]any{"f:metadata": map[string]any{"f:annotations": map[string]any{"f:" + lastAppliedKey: map[string]any{}}}}
	restored := map[string]any{"f:spec": map[string]any{"f:template": map[string]any{"f:metadata": map[string]any{"f:annotations": map[string]any{"f:" + stamp: map[string]any{}}}}}}
	both := map[string]any{"f:metadata": record["f:metadata"], "f:spec": restored["f:spec"]}
	entry := func(manager string, fields map[string]any) any {
		return map[string]any{"manager": manager, "operation": "Update", "fieldsV1": fields}
	}
	orphan := framework.Reported{Finding: framework.Finding{Action: framework.Warn, Rule: "orphaned-field", Path: q.String()},
		Line: "Warning: [orphaned-field] Deployment demo/frontend: " + q.String() + " is in neither your manifest nor last-applied, so kubectl apply will never remove it."}
	miss := []string{"orphaned-field-reported expected [orphaned-field] " + q.String()}
	tests := map[string]struct {
		entries []any
		undo    bool
		got     []framework.Reported
		want    []string
	}{
		"an undo's field under the record's entry, silent": {entries: []any{entry("kubectl", both)}, undo: true},
		"an undo's field under the record's entry, warned": {entries: []any{entry("kubectl", both)}, undo: true, got: []framework.Reported{orphan}},
		"an undo's field, the record another entry's, silent": {
			entries: []any{entry("kubectl", restored), entry("kubectl-client-side-apply", record)}, undo: true, want: miss,
		},
		"an undo's field owned by the record's entry and another, silent": {
			entries: []any{entry("kubectl", both), entry("reloader", restored)}, undo: true, want: miss,
		},
		"a patch's field under the record's entry, silent": {entries: []any{entry("kubectl", both)}, want: miss},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{t: t, fields: map[string]setField{q.String(): {path: q, person: true, undo: tc.undo}},
				restored: func(fieldPath, map[string]any) bool { return false }}
			before := withLastApplied(t, live, unchangedManifest)
			before["metadata"].(map[string]any)["managedFields"] = tc.entries
			apply := step{Writer: "kubectl apply", As: alice, Kind: clientSideApply, Args: []string{"apply", "-f", "-"}, Stdin: unchangedManifest}
			r.judgeApply(0, apply, framework.Result{Stdout: "deployment.apps/frontend configured\n"}, tc.got, before, before)
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
