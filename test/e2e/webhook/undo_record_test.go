package webhook_test

import (
	"regexp"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// kubectl apply set-last-applied and kubectl rollout undo both send no
// field manager, so the server records them as one entry, kubectl/Update,
// which then owns last-applied and the fields the undo restored. A
// variable that a person set, removed and the undo brought back is in
// neither the manifest nor last-applied: the next apply warns that it will
// never remove it (before 2943bbd it said nothing), as kubectl
// hygiene diff predicted, and the command it prints removes it.
func TestUndoAfterSetLastAppliedKeepsItsOrphan(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	ns := f.Namespace
	framework.ApplyPredicted(t, k, "testdata/recorded-v1.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=recorded", 1)
	k.Run(t, "set", "env", "deployment/recorded", "GEN=1").MustSucceed(t)
	f.WaitForRevisions(t, "app=recorded", 2)
	k.Run(t, "set", "env", "deployment/recorded", "GEN-").MustSucceed(t)

	res := k.Run(t, "apply", "set-last-applied", "-f", "testdata/recorded-v2.yaml").MustSucceed(t)
	framework.WantLines(t, res.Stdout, "deployment.apps/recorded configured")
	framework.WantLines(t, res.Stderr)

	res = k.Run(t, "rollout", "undo", "deployment/recorded").MustSucceed(t)
	framework.WantLines(t, res.Stdout, "deployment.apps/recorded rolled back")
	framework.WantLines(t, res.Stderr, "Warning: resource deployments/recorded was previously managed with 'kubectl apply'. "+
		"Rolling back will not update the kubectl.kubernetes.io/last-applied-configuration annotation, which may cause unexpected behavior "+
		"on future 'kubectl apply' operations. Consider using 'kubectl apply' with your previous configuration file instead.")
	if got := k.JSONPath(t, "deployment/recorded", "{.spec.template.spec.containers[0].env}"); got != `[{"name":"GEN","value":"1"}]` {
		t.Fatalf("env after the undo = %s, want GEN=1 back", got)
	}

	res = framework.ApplyPredicted(t, k, "testdata/recorded-v2.yaml").MustSucceed(t)
	framework.WantLines(t, res.Stdout, "deployment.apps/recorded configured")
	remove := `kubectl patch deployments.apps/recorded -n ` + ns + ` --type=json -p '[` +
		`{"op":"test","path":"/spec/template/spec/containers/0/name","value":"nginx"},` +
		`{"op":"test","path":"/spec/template/spec/containers/0/env/0/name","value":"GEN"},` +
		`{"op":"remove","path":"/spec/template/spec/containers/0/env/0"}]'`
	framework.WantMatch(t, res.Stderr, regexp.QuoteMeta(`Warning: [orphaned-field] Deployment `+ns+`/recorded: `+
		`spec.template.spec.containers[name=nginx].env[name=GEN] ({"name":"GEN","value":"1"}, set by kubectl at `)+
		`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`+
		regexp.QuoteMeta(`) is in neither your manifest nor last-applied, so kubectl apply will never remove it. `+
			`Removing it changes the pod template, so it rolls the pods (a new rollout starts). Remove it with: `+remove))

	framework.WantLines(t, k.RunPrinted(t, remove), "deployment.apps/recorded patched")
	res = framework.ApplyPredicted(t, k, "testdata/recorded-v2.yaml").MustSucceed(t)
	framework.WantLines(t, res.Stdout, "deployment.apps/recorded unchanged")
	framework.WantLines(t, res.Stderr)
}
