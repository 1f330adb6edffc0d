package webhook_test

import (
	"regexp"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// A manifest with null pod-template annotations makes every apply delete
// the whole map: the first apply after kubectl rollout restart silently
// removes restartedAt (and restarts every pod again). apply-hygiene warns,
// naming what goes, who set it and when.
func TestApplyThatDeletesWhatRolloutRestartSetIsARevert(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	framework.ApplyPredicted(t, k, "testdata/null-annotations.yaml").MustSucceed(t)
	restart := k.Run(t, "rollout", "restart", "deployment/web").MustSucceed(t)
	framework.WantLines(t, restart.Stderr)

	apply := framework.ApplyPredicted(t, k, "testdata/null-annotations.yaml").MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/web configured")
	ts := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`
	framework.WantMatch(t, apply.Stderr,
		regexp.QuoteMeta("Warning: [apply-reverts-drift] Deployment "+f.Namespace+"/web: this apply removes "+
			"spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt], discarding \"")+`[^"]+`+
			regexp.QuoteMeta("\" set by kubectl-rollout at ")+ts+
			regexp.QuoteMeta(" since the last apply. To keep that value, put it in your manifest before you apply; "+
				"see every drifted field with: kubectl hygiene explain deployments.apps/web -n "+f.Namespace))
	if got := k.JSONPath(t, "deployment/web", "{.spec.template.metadata.annotations}"); got != "" {
		t.Errorf("pod-template annotations after the apply = %q, want none (the manifest's null deletes them)", got)
	}
}
