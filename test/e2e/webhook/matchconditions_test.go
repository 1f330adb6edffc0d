package webhook_test

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The chart's matchConditions keep the API server from calling a webhook
// for writes it would let through unreviewed: neither webhook for a
// Kubernetes component's write, and not the mutating one for an imperative
// kubectl command. An apply still goes to both.
func TestAPIServerCallsOnlyTheWebhooksThatReview(t *testing.T) {
	f := framework.New(t)
	f.Kubectl.Run(t, "apply", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
	waitSettled(t, f, "web")
	const component = "system:apply-hygiene-e2e-component"
	f.Grant(t, "edit", rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: component})
	asComponent := f.KubectlAs(t, component)
	metrics := framework.Webhook(t).MetricsURL

	tests := []struct {
		name string
		run  func(t *testing.T)
		// wantMutate and wantValidate say whether the webhook is called.
		wantMutate, wantValidate bool
	}{
		{name: "a component's label", wantMutate: false, wantValidate: false, run: func(t *testing.T) {
			asComponent.Run(t, "label", "deployment/web", "set-by-component=yes").MustSucceed(t)
		}},
		{name: "kubectl label", wantMutate: false, wantValidate: true, run: func(t *testing.T) {
			f.Kubectl.Run(t, "label", "deployment/web", "set-by-person=yes").MustSucceed(t)
		}},
		{name: "kubectl apply", wantMutate: true, wantValidate: true, run: func(t *testing.T) {
			f.Kubectl.Run(t, "apply", "-f", "testdata/deployment-v2.yaml").MustSucceed(t)
			waitSettled(t, f, "web")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := scrape(t, metrics)
			tc.run(t)
			after := scrape(t, metrics)
			for webhook, want := range map[string]bool{"mutate": tc.wantMutate, "validate": tc.wantValidate} {
				got := reviews(after, webhook) - reviews(before, webhook)
				// The API server retries an update that conflicts with a
				// controller's status write: a call may count twice.
				if want && (got < 1 || got > 2) || !want && got != 0 {
					t.Errorf("%s webhook reviewed %v requests, want %s", webhook, got, map[bool]string{true: "1 (2 if retried)", false: "0"}[want])
				}
			}
		})
	}
}

// reviews sums apply_hygiene_reviews_total of one webhook over all
// classifications and outcomes.
func reviews(samples map[string]float64, webhook string) float64 {
	var n float64
	for series, v := range samples {
		if strings.HasPrefix(series, "apply_hygiene_reviews_total{") && strings.Contains(series, `webhook="`+webhook+`"`) {
			n += v
		}
	}
	return n
}
