package generative_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// recordedManifest is the manifest that kubectl apply set-last-applied
// recorded and the next apply sends: image nginx:1, no template
// annotation.
const recordedManifest = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"frontend","labels":{"app":"frontend"}},` +
	`"spec":{"selector":{"matchLabels":{"app":"frontend"}},"template":{"spec":{"containers":[{"name":"web","image":"nginx:1"}]}}}}`

// An undo's field that managedFields give only to entries recording
// last-applied (kubectl rollout undo and kubectl apply set-last-applied
// share the entry named kubectl) reads as the record's: an apply that
// leaves it orphaned, or sets it back, may say so and need not. Owned by
// any other entry too, or set by anything but an undo, it must be
// reported.
func TestJudgeApplyOfAnUndoUnderTheRecord(t *testing.T) {
	const stamp = "reloader.stakater.com/last-reloaded-from"
	annotation := framework.Path("spec", "template", "metadata", "annotations").Key(stamp)
	image := framework.Path("spec", "template", "spec", "containers").Named("web").Key("image")
	object := func(restored string) string {
		return `{"metadata":{"name":"frontend","labels":{"app":"frontend"}},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"frontend"}},"template":` + restored + `}}`
	}
	stamped := object(`{"metadata":{"annotations":{"` + stamp + `":"configmap-1"}},"spec":{"containers":[{"name":"web","image":"nginx:1"}]}}`)
	undone := object(`{"spec":{"containers":[{"name":"web","image":"registry.example/set:7"}]}}`)
	applied := object(`{"spec":{"containers":[{"name":"web","image":"nginx:1"}]}}`)
	record := map[string]any{"f:metadata": map[string]any{"f:annotations": map[string]any{"f:" + lastAppliedKey: map[string]any{}}}}
	owning := func(q fieldPath) map[string]any {
		if q.String() == image.String() {
			return map[string]any{"f:spec": map[string]any{"f:template": map[string]any{"f:spec": map[string]any{"f:containers": map[string]any{
				`k:{"name":"web"}`: map[string]any{"f:image": map[string]any{}}}}}}}
		}
		return map[string]any{"f:spec": map[string]any{"f:template": map[string]any{"f:metadata": map[string]any{"f:annotations": map[string]any{"f:" + stamp: map[string]any{}}}}}}
	}
	entry := func(manager string, sets ...map[string]any) any {
		fields := map[string]any{}
		for _, set := range sets {
			for k, v := range set {
				fields[k] = v
			}
		}
		return map[string]any{"manager": manager, "operation": "Update", "fieldsV1": fields}
	}
	reported := func(rule string, q fieldPath) []framework.Reported {
		return []framework.Reported{{Finding: framework.Finding{Action: framework.Warn, Rule: rule, Path: q.String()},
			Line: "Warning: [" + rule + "] Deployment demo/frontend: " + q.String()}}
	}
	// Each rule's field, and who owns it.
	rules := []struct {
		rule          string
		q             fieldPath
		before, after string
	}{
		{rule: "orphaned-field", q: annotation, before: stamped, after: stamped},
		{rule: "apply-reverts-drift", q: image, before: undone, after: applied},
	}
	owners := []struct {
		name    string
		entries func(q fieldPath) []any
		undo    bool
		warned  bool
		// missed: the check fails for want of the finding.
		missed bool
	}{
		{name: "an undo's field under the record's entry, silent", undo: true,
			entries: func(q fieldPath) []any { return []any{entry("kubectl", record, owning(q))} }},
		{name: "an undo's field under the record's entry, warned", undo: true, warned: true,
			entries: func(q fieldPath) []any { return []any{entry("kubectl", record, owning(q))} }},
		{name: "an undo's field, the record another entry's, silent", undo: true, missed: true,
			entries: func(q fieldPath) []any {
				return []any{entry("kubectl", owning(q)), entry("kubectl-client-side-apply", record)}
			}},
		{name: "an undo's field owned by the record's entry and another, silent", undo: true, missed: true,
			entries: func(q fieldPath) []any {
				return []any{entry("kubectl", record, owning(q)), entry("reloader", owning(q))}
			}},
		{name: "a patch's field under the record's entry, silent", missed: true,
			entries: func(q fieldPath) []any { return []any{entry("kubectl", record, owning(q))} }},
	}
	for _, rl := range rules {
		for _, o := range owners {
			t.Run(rl.rule+": "+o.name, func(t *testing.T) {
				r := &runner{t: t, fields: map[string]setField{rl.q.String(): {path: rl.q, person: true, undo: o.undo}},
					restored: func(fieldPath, map[string]any) bool { return false }}
				before := withLastApplied(t, rl.before, recordedManifest)
				before["metadata"].(map[string]any)["managedFields"] = o.entries(rl.q)
				var got []framework.Reported
				if o.warned {
					got = reported(rl.rule, rl.q)
				}
				apply := step{Writer: "kubectl apply", As: alice, Kind: clientSideApply, Args: []string{"apply", "-f", "-"}, Stdin: recordedManifest}
				r.judgeApply(0, apply, framework.Result{Stdout: "deployment.apps/frontend configured\n"}, got, before, withLastApplied(t, rl.after, recordedManifest))
				var failed []string
				for _, f := range r.failures {
					failed = append(failed, f.check+" "+f.detail)
				}
				var want []string
				if o.missed {
					want = []string{rl.rule + "-reported expected [" + rl.rule + "] " + rl.q.String()}
				}
				if diff := cmp.Diff(want, failed); diff != "" {
					t.Errorf("failed checks (-want +got):\n%s", diff)
				}
			})
		}
	}
}
