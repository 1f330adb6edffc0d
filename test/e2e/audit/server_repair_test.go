package audit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Seed 004 undone while its namespace was labelled apply-hygiene.io/ignore
// (the webhook did not see the undo, so last-applied stayed v2's): once
// the label goes, the periodic audit repairs last-applied to v1's, which
// the restored ControllerRevision kept, writing it through the webhooks
// as kubectl-client-side-apply, which owned the annotation and still owns
// it alone. While the label is on, nothing is written.
func testAuditRepairsLastAppliedAsItsClientSideManager(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "label", "namespace", f.Namespace, "apply-hygiene.io/ignore=true").MustSucceed(t)
	k.Run(t, "apply", "-f", "testdata/seed004-v1.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=my-wonderhoy-app", 1)
	v1 := k.JSONPath(t, sts, lastAppliedExpr)
	k.Run(t, "apply", "-f", "testdata/seed004-v2.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=my-wonderhoy-app", 2)
	v2 := k.JSONPath(t, sts, lastAppliedExpr)
	k.Run(t, "rollout", "undo", sts, "--to-revision=1").MustSucceed(t)

	gauge := `apply_hygiene_audit_findings{namespace="` + f.Namespace + `",rule="stale-last-applied"} 1`
	framework.Eventually(t, 60*time.Second, "a scan that reports the stale last-applied in the ignored namespace", func(ctx context.Context) (bool, error) {
		return len(framework.MetricLines(framework.PollWebhookMetrics(ctx, t), gauge)) == 1, nil
	})
	if got := k.JSONPath(t, sts, lastAppliedExpr); got != v2 {
		t.Fatalf("last-applied in the ignored namespace:\n%s\nwant v2's left alone:\n%s", got, v2)
	}

	k.Run(t, "label", "namespace", f.Namespace, "apply-hygiene.io/ignore-").MustSucceed(t)
	framework.Eventually(t, 60*time.Second, "last-applied repaired by the audit", func(context.Context) (bool, error) {
		return k.JSONPath(t, sts, lastAppliedExpr) == v1, nil
	})
	var owners []string
	for _, l := range strings.Split(k.JSONPath(t, sts, `{range .metadata.managedFields[*]}{.manager}{" "}{.operation}{" "}{.fieldsV1.f:metadata.f:annotations}{"\n"}{end}`), "\n") {
		if strings.Contains(l, "f:kubectl.kubernetes.io/last-applied-configuration") {
			owners = append(owners, strings.Fields(l)[0]+" "+strings.Fields(l)[1])
		}
	}
	if diff := cmp.Diff([]string{"kubectl-client-side-apply Update"}, owners); diff != "" {
		t.Errorf("the owners of last-applied (-want +got):\n%s", diff)
	}
}
