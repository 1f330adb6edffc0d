package generative_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// ownManagerGrown is unchangedManifest with a label more: an apply of it
// changes last-applied, and ownManagerGrownObject is unchangedPatched
// with that label, the object after it.
const (
	ownManagerGrown       = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"frontend","labels":{"app":"frontend","gen.example.com/prune-set":"gen","tier":"web"}},"spec":{"selector":{"matchLabels":{"app":"frontend"}}}}`
	ownManagerGrownObject = `{"metadata":{"name":"frontend","labels":{"app":"frontend","gen.example.com/prune-set":"gen","tier":"web"}},"spec":{"replicas":1,"minReadySeconds":7,"selector":{"matchLabels":{"app":"frontend"}}}}`
)

// An apply under a field manager of its own that leaves last-applied as it
// was sends what kubectl patch --field-manager of that name sends, and one
// that changes last-applied alone what kubectl apply edit-last-applied
// --field-manager of that name sends: no reviewer can tell it is an
// apply, so its findings are allowed, not required. Under kubectl apply's
// own name, or with the object changed too, they are required.
func TestJudgeApplyUnderOwnManager(t *testing.T) {
	ciDeployer := []string{"apply", "--field-manager=ci-deployer", "-f", "-"}
	orphan := framework.Reported{Finding: framework.Finding{Action: framework.Warn, Rule: "orphaned-field", Path: "spec.minReadySeconds"},
		Line: "Warning: [orphaned-field] Deployment demo/frontend: spec.minReadySeconds (7, set by kubectl-patch) is in neither your manifest nor last-applied, so kubectl apply will never remove it."}
	miss := []string{"orphaned-field-reported expected [orphaned-field] spec.minReadySeconds"}
	tests := map[string]struct {
		args     []string
		manifest string
		// after is the object after the apply; unchangedPatched when "".
		after string
		got   []framework.Reported
		want  []string
	}{
		"under its own manager, last-applied unchanged, silent": {args: ciDeployer, manifest: unchangedManifest},
		"under its own manager, last-applied unchanged, warned": {args: ciDeployer, manifest: unchangedManifest, got: []framework.Reported{orphan}},
		"under its own manager, last-applied alone changed, silent": {
			args: ciDeployer, manifest: ownManagerGrown,
		},
		"under its own manager, last-applied and the object changed, silent": {
			args: ciDeployer, manifest: ownManagerGrown, after: ownManagerGrownObject, want: miss,
		},
		"under kubectl apply's manager, unchanged, silent": {args: []string{"apply", "-f", "-"}, manifest: unchangedManifest, want: miss},
		"under kubectl apply's manager named, unchanged, silent": {
			args: []string{"apply", "--field-manager=kubectl-client-side-apply", "-f", "-"}, manifest: unchangedManifest, want: miss,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			apply := step{Writer: "kubectl apply", As: alice, Kind: clientSideApply, Args: tc.args, Stdin: tc.manifest}
			after := unchangedPatched
			if tc.after != "" {
				after = tc.after
			}
			got := failedAfterPatch(t, unchangedManifest, unchangedPatched, apply, "deployment.apps/frontend configured\n", tc.got, withLastApplied(t, after, tc.manifest))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("failed checks (-want +got):\n%s", diff)
			}
		})
	}
}
