package generative_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The objects of soak seed 271126, sequence 329: alice's kubectl patch set
// spec.minReadySeconds, which her manifest leaves out; her next kubectl
// apply --prune -l of the same manifest found nothing to change in the
// object, so kubectl sent it no request, and pruned the set's anchor.
const (
	unchangedManifest = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"frontend","labels":{"app":"frontend","gen.example.com/prune-set":"gen"}},"spec":{"selector":{"matchLabels":{"app":"frontend"}}}}`
	unchangedBefore   = `{"metadata":{"name":"frontend","labels":{"app":"frontend","gen.example.com/prune-set":"gen"}},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"frontend"}}}}`
	unchangedPatched  = `{"metadata":{"name":"frontend","labels":{"app":"frontend","gen.example.com/prune-set":"gen"}},"spec":{"replicas":1,"minReadySeconds":7,"selector":{"matchLabels":{"app":"frontend"}}}}`
)

// An apply that kubectl reports unchanged sent no request, so no webhook
// could warn at it: a person's orphan is required of an apply that sent
// the object, whatever else kubectl's output says of the other objects it
// pruned.
func TestJudgeApplyThatSentNothing(t *testing.T) {
	prune := []string{"apply", "--prune", "-l", pruneSelector, "--prune-allowlist=apps/v1/Deployment", "--prune-allowlist=core/v1/ConfigMap", "-f", "-"}
	tests := map[string]struct {
		args   []string
		stdout string
		want   []string
	}{
		"kubectl apply of the object unchanged": {
			args:   []string{"apply", "-f", "-"},
			stdout: "deployment.apps/frontend unchanged\n",
		},
		"kubectl apply --prune -l of the object unchanged that pruned the anchor": {
			args:   prune,
			stdout: "deployment.apps/frontend unchanged\nconfigmap/gen-prune-anchor pruned\n",
		},
		"kubectl apply --prune -l that configured the object and pruned the anchor": {
			args:   prune,
			stdout: "deployment.apps/frontend configured\nconfigmap/gen-prune-anchor pruned\n",
			want:   []string{"orphaned-field-reported expected [orphaned-field] spec.minReadySeconds"},
		},
		"kubectl apply that configured the object": {
			args:   []string{"apply", "-f", "-"},
			stdout: "deployment.apps/frontend configured\n",
			want:   []string{"orphaned-field-reported expected [orphaned-field] spec.minReadySeconds"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			apply := step{Writer: "kubectl apply", As: alice, Kind: clientSideApply, Args: tc.args, Stdin: unchangedManifest}
			got := failedAfterPatch(t, unchangedManifest, unchangedPatched, apply, tc.stdout, nil, withLastApplied(t, unchangedPatched, unchangedManifest))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("failed checks (-want +got):\n%s", diff)
			}
		})
	}
}

// An apply that only drops a field from last-applied, which the API server
// then defaults back to the value it had (seed 281154, sequence 007: a
// manifest without replicas: 1), changes nothing but last-applied, as
// kubectl apply edit-last-applied's hand-over of the field does under the
// same field manager: no reviewer can tell the two apart, so the apply's
// findings are allowed, not required.
func TestJudgeApplyThatOnlyShrankLastApplied(t *testing.T) {
	const (
		withReplicas = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"frontend","labels":{"app":"frontend","gen.example.com/prune-set":"gen"}},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"frontend"}}}}`
		relabelled   = `{"metadata":{"name":"frontend","labels":{"app":"frontend","gen.example.com/prune-set":"gen","tier":"web"}},"spec":{"replicas":1,"minReadySeconds":7,"selector":{"matchLabels":{"app":"frontend"}}}}`
		grown        = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"frontend","labels":{"app":"frontend","gen.example.com/prune-set":"gen"}},"spec":{"replicas":1,"revisionHistoryLimit":10,"selector":{"matchLabels":{"app":"frontend"}}}}`
	)
	stamped := func(revision string) string {
		return strings.Replace(unchangedPatched, `"metadata":{`, `"metadata":{"annotations":{"`+meshStamp+`":"`+revision+`"},`, 1)
	}
	held := strings.Replace(unchangedPatched, `"metadata":{`, `"metadata":{"finalizers":["gen.example.com/hold"],`, 1)
	miss := []string{"orphaned-field-reported expected [orphaned-field] spec.minReadySeconds"}
	tests := map[string]struct {
		before, after, laBefore, laAfter string
		want                             []string
	}{
		"last-applied lost replicas, the object kept it": {
			before: unchangedPatched, after: unchangedPatched, laBefore: withReplicas, laAfter: unchangedManifest,
		},
		"last-applied lost replicas, the mesh injector restamped the object": {
			before: stamped("1"), after: stamped("2"), laBefore: withReplicas, laAfter: unchangedManifest,
		},
		"last-applied lost replicas, the object lost a finalizer": {
			before: held, after: unchangedPatched, laBefore: withReplicas, laAfter: unchangedManifest, want: miss,
		},
		"last-applied lost replicas, the object changed too": {
			before: unchangedPatched, after: relabelled, laBefore: withReplicas, laAfter: unchangedManifest, want: miss,
		},
		"last-applied gained a field the object had": {
			before: unchangedPatched, after: unchangedPatched, laBefore: withReplicas, laAfter: grown, want: miss,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			apply := step{Writer: "kubectl apply", As: alice, Kind: clientSideApply, Args: []string{"apply", "-f", "-"}, Stdin: tc.laAfter}
			got := failedAfterPatch(t, tc.laBefore, tc.before, apply, "deployment.apps/frontend configured\n", nil, withLastApplied(t, tc.after, tc.laAfter))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("failed checks (-want +got):\n%s", diff)
			}
		})
	}
}

// failedAfterPatch judges apply, which printed stdout and got and left
// after, on a runner that saw alice's kubectl patch set
// spec.minReadySeconds to 7 (unchangedBefore turned into patched, both
// with last-applied la), and returns the failed checks with their
// details.
func failedAfterPatch(t *testing.T, la, patched string, apply step, stdout string, got []framework.Reported, after map[string]any) []string {
	t.Helper()
	r := &runner{t: t, fields: map[string]setField{}, restored: func(fieldPath, map[string]any) bool { return false }}
	r.record(step{Writer: "kubectl patch --type=strategic", As: alice, Kind: write,
		Args: []string{"patch", "deployment/frontend", "--type=strategic", "-p", `{"spec":{"minReadySeconds":7}}`}},
		withLastApplied(t, unchangedBefore, la), withLastApplied(t, patched, la))
	r.judgeApply(0, apply, framework.Result{Stdout: stdout}, got, withLastApplied(t, patched, la), after)
	var failed []string
	for _, f := range r.failures {
		failed = append(failed, f.check+" "+f.detail)
	}
	return failed
}
