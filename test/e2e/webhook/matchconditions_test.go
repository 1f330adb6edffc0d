package webhook_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The chart's matchConditions keep the API server from calling a webhook
// for writes it would let through unreviewed: neither webhook for a
// Kubernetes component's write, and not the mutating one for an imperative
// kubectl command or a client's write that can be neither an apply nor a
// rollout undo. An apply and a new pod template still go to both.
func TestAPIServerCallsOnlyTheWebhooksThatReview(t *testing.T) {
	f := framework.New(t)
	f.Kubectl.Run(t, "apply", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
	waitSettled(t, f, "web")
	// A kubelet's name (without the system:nodes group, so that the node
	// authorizer and NodeRestriction leave it to RBAC).
	const component = "system:node:apply-hygiene-e2e"
	f.Grant(t, "edit", rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: component})
	asComponent := f.KubectlAs(t, component)
	// OpenShift's administrator: a system: name, but a person.
	const admin = "system:admin"
	f.Grant(t, "edit", rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: admin})
	asAdmin := f.KubectlAs(t, admin)

	tests := []struct {
		name string
		run  func(t *testing.T)
		// wantMutate and wantValidate say whether the webhook is called.
		wantMutate, wantValidate bool
	}{
		{name: "a component's label", wantMutate: false, wantValidate: false, run: func(t *testing.T) {
			asComponent.Run(t, "label", "deployment/web", "set-by-component=yes").MustSucceed(t)
		}},
		{name: "system:admin's label", wantMutate: false, wantValidate: true, run: func(t *testing.T) {
			asAdmin.Run(t, "label", "deployment/web", "set-by-admin=yes").MustSucceed(t)
		}},
		{name: "kubectl label", wantMutate: false, wantValidate: true, run: func(t *testing.T) {
			f.Kubectl.Run(t, "label", "deployment/web", "set-by-person=yes").MustSucceed(t)
		}},
		{name: "a client's label without a field manager", wantMutate: false, wantValidate: true, run: func(t *testing.T) {
			update(t, f, func(d *appsv1.Deployment) { d.Labels["set-by-client"] = "yes" })
		}},
		{name: "a client's new pod template without a field manager", wantMutate: true, wantValidate: true, run: func(t *testing.T) {
			// What kubectl rollout undo sends: the mutating webhook checks
			// it against the revisions.
			update(t, f, func(d *appsv1.Deployment) { d.Spec.Template.Labels["set-by-client"] = "yes" })
			waitSettled(t, f, "web")
		}},
		{name: "kubectl apply", wantMutate: true, wantValidate: true, run: func(t *testing.T) {
			f.Kubectl.Run(t, "apply", "-f", "testdata/deployment-v2.yaml").MustSucceed(t)
			waitSettled(t, f, "web")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := framework.ParseSamples(t, framework.WebhookMetrics(t))
			tc.run(t)
			after := framework.ParseSamples(t, framework.WebhookMetrics(t))
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

// update changes Deployment web with client-go, which sends no field
// manager.
func update(t *testing.T, f *framework.Framework, change func(*appsv1.Deployment)) {
	t.Helper()
	d, err := f.Client.AppsV1().Deployments(f.Namespace).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	change(d)
	if _, err := f.Client.AppsV1().Deployments(f.Namespace).Update(t.Context(), d, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating deployment web: %v", err)
	}
}

// reviews sums apply_hygiene_reviews_total of one webhook over all
// classifications and outcomes.
func reviews(samples framework.Samples, webhook string) float64 {
	return samples.Sum("apply_hygiene_reviews_total", func(series string) bool { return framework.Label(series, "webhook") == webhook })
}
