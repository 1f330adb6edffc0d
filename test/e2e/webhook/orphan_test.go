package webhook_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Seed 003 with apply-hygiene: the apply after kubectl rollout restart
// warns about restartedAt with a command, and that command removes it.
func TestOrphanedRestartedAtWarnsWithCommandThatRemovesIt(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	framework.ApplyPredicted(t, k, seeds+"seed003-v1.yaml").MustSucceed(t)
	k.Run(t, "rollout", "restart", "deployment/nginx-deployment").MustSucceed(t)

	apply := framework.ApplyPredicted(t, k, seeds+"seed003-v2.yaml").MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/nginx-deployment configured")
	ts := `(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)`
	m := framework.WantMatch(t, apply.Stderr,
		regexp.QuoteMeta("Warning: [orphaned-field] Deployment "+f.Namespace+"/nginx-deployment: "+
			"spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt] (\"")+ts+regexp.QuoteMeta("\", set by kubectl-rollout at ")+ts+
			regexp.QuoteMeta(") is in neither your manifest nor last-applied, so kubectl apply will never remove it. "+
				"Removing it changes the pod template, so it rolls the pods (a new rollout starts). Remove it with: ")+
			"(kubectl patch deployments.apps/nginx-deployment -n "+regexp.QuoteMeta(f.Namespace)+" --type=json -p '.*')")
	command := m[0][3]

	out := k.RunPrinted(t, command)
	framework.WantLines(t, strings.TrimSpace(out), "deployment.apps/nginx-deployment patched")
	framework.WantLines(t, k.JSONPath(t, "deployment/nginx-deployment", "{.spec.template.metadata.annotations}"))
}
