package webhook_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// An undo of an undo brings back a sidecar that v1 added and `kubectl set
// env` changed: last-applied already has the sidecar, so the repair keeps
// v1's (no DEBUG, no server defaults), and the next apply of v1 is
// unchanged: DEBUG stays and no pod rolls.
func TestUndoOfAnUndoKeepsLastAppliedsSidecar(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	const short = "deployment/web"
	framework.ApplyPredicted(t, k, "testdata/deployment-sidecar-v0.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=web", 1)
	framework.ApplyPredicted(t, k, "testdata/deployment-sidecar-v1.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=web", 2)
	framework.WantLines(t, k.Run(t, "set", "env", short, "-c", "sidecar", "DEBUG=1").MustSucceed(t).Stdout, "deployment.apps/web env updated")
	f.WaitForRevisions(t, "app=web", 3)
	lastAppliedBefore := k.Run(t, "apply", "view-last-applied", short, "-o", "json").MustSucceed(t).Stdout

	first := k.Run(t, "rollout", "undo", short, "--to-revision=1").MustSucceed(t)
	framework.WantLines(t, first.Stdout, "deployment.apps/web rolled back")
	framework.WantLines(t, first.Stderr, kubectlUndoWarning("deployments", "web"))
	framework.Eventually(t, 30*time.Second, "revision 1 renumbered to 4", func(context.Context) (bool, error) {
		return k.JSONPath(t, short, `{.metadata.annotations.deployment\.kubernetes\.io/revision}`) == "4", nil
	})
	second := k.Run(t, "rollout", "undo", short).MustSucceed(t)
	framework.WantLines(t, second.Stdout, "deployment.apps/web rolled back")
	framework.WantLines(t, second.Stderr, kubectlUndoWarning("deployments", "web"))
	framework.WantLines(t, k.JSONPath(t, short, "{.spec.template.spec.containers[1].env}"), `[{"name":"DEBUG","value":"1"}]`)
	if got := k.Run(t, "apply", "view-last-applied", short, "-o", "json").MustSucceed(t).Stdout; got != lastAppliedBefore {
		t.Errorf("last-applied after the undos:\n%s\nwant v1's, unchanged:\n%s", got, lastAppliedBefore)
	}

	apply := framework.ApplyPredicted(t, k, "testdata/deployment-sidecar-v1.yaml").MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/web unchanged")
	framework.WantLines(t, apply.Stderr)
	framework.WantLines(t, k.JSONPath(t, short, "{.spec.template.spec.containers[1].env}"), `[{"name":"DEBUG","value":"1"}]`)
	rs, err := f.Client.AppsV1().ReplicaSets(f.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.Items) != 3 {
		t.Errorf("%d ReplicaSets after the apply, want the 3 of v0, v1 and set env", len(rs.Items))
	}
}
