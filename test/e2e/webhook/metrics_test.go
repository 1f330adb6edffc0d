package webhook_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The metrics endpoint counts the requests a test makes: one denied
// imperative edit and one warned apply.
func TestMetricsCountTheRequests(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	denied := `apply_hygiene_reviews_total{classification="imperative",outcome="denied",webhook="validate"}`
	denyDecisions := `apply_hygiene_decisions_total{action="deny",rule="imperative-edit",webhook="validate"}`
	orphanWarnings := `apply_hygiene_decisions_total{action="warn",rule="orphaned-field",webhook="validate"}`
	repairs := `apply_hygiene_decisions_total{action="repair",rule="stale-last-applied",webhook="mutate"}`
	before := framework.ParseSamples(t, framework.WebhookMetrics(t))

	// Each write waits for the Deployment controller's status update: a
	// patch that conflicts with it is retried by the API server, and the
	// retry is reviewed again.
	k.Run(t, "apply", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
	waitSettled(t, f, "web")
	k.Run(t, "set", "image", "deployment/web", "nginx=nginx:1.99").MustFail(t)
	k.Run(t, "rollout", "restart", "deployment/web").MustSucceed(t)
	waitSettled(t, f, "web")
	k.Run(t, "apply", "-f", "testdata/deployment-v2.yaml").MustSucceed(t)

	// One request each; an update that still conflicts with a status
	// write is retried inside the API server and reviewed once more, so a
	// counter may move by two, never by none or more.
	after := framework.ParseSamples(t, framework.WebhookMetrics(t))
	for _, series := range []string{denied, denyDecisions, orphanWarnings} {
		if got := after[series] - before[series]; got < 1 || got > 2 {
			t.Errorf("%s went from %v to %v, want one more (two if the API server retried)", series, before[series], after[series])
		}
	}
	if got := after[repairs] - before[repairs]; got != 0 {
		t.Errorf("%s went from %v to %v, want no change: no undo happened", repairs, before[repairs], after[repairs])
	}
	// The rollout restart changes no field of last-applied: its analysis
	// is empty, and the bundled rules are silent on it, so Rego is not run.
	skipped := `apply_hygiene_policy_evaluations_skipped_total`
	if after[skipped] <= before[skipped] {
		t.Errorf("%s went from %v to %v, want more: the restart's review needs no evaluation", skipped, before[skipped], after[skipped])
	}
	if after[`apply_hygiene_policy_set_version`] != 1 {
		t.Errorf("apply_hygiene_policy_set_version = %v, want 1", after[`apply_hygiene_policy_set_version`])
	}
}

// waitSettled waits until the Deployment controller has observed the
// Deployment's latest generation.
func waitSettled(t *testing.T, f *framework.Framework, name string) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, "deployment/"+name+" observed", func(ctx context.Context) (bool, error) {
		d, err := f.Client.AppsV1().Deployments(f.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return d.Status.ObservedGeneration == d.Generation, nil
	})
}
