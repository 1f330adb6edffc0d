package tracing_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Whose traceparent kube-apiserver continues when its own tracing is on
// (docs/operations.md, "Who decides which reviews are traced"): a client's
// in the group system:masters, whose trace then holds the API server's
// request, its webhook call and apply-hygiene's review; not a service
// account's, whose write starts a new trace that no span of the API server
// or of apply-hygiene shares with the traceparent it sent.
func TestClientTraceparentIsContinuedOnlyForSystemMasters(t *testing.T) {
	f := framework.New(t)
	f.Kubectl.Run(t, "apply", "-f", "testdata/web-v1.yaml").MustSucceed(t)
	robot := f.KubectlAsServiceAccountIn(t, f.Namespace, "robot")
	const (
		adminTrace = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		robotTrace = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	)

	annotate(t, f.Kubectl.Kubeconfig, f.Namespace, adminTrace, "admin")
	var trace []span
	framework.Eventually(t, time.Minute, "the admin's trace with apply-hygiene's review in it", func(context.Context) (bool, error) {
		trace = spansOf(otlp.Spans(), adminTrace)
		// At least one review: the API server retries a patch that meets
		// a conflict (the Deployment controller's status update right
		// after the create), admission and its webhook calls included,
		// in the same request's trace.
		return hasWebhookCall(trace, "validate.apply-hygiene.io") && len(named(trace, "apply-hygiene", "apply-hygiene /validate")) >= 1, nil
	})

	before := len(reviews(otlp.Spans(), f.Namespace))
	annotate(t, robot.Kubeconfig, f.Namespace, robotTrace, "robot")
	framework.Eventually(t, time.Minute, "the API server's trace of the robot's write with apply-hygiene's review in it", func(context.Context) (bool, error) {
		all := otlp.Spans()
		rs := reviews(all, f.Namespace)
		return len(rs) > before && hasWebhookCall(spansOf(all, rs[len(rs)-1].TraceID), "validate.apply-hygiene.io"), nil
	})
	if got := spansOf(otlp.Spans(), robotTrace); len(got) != 0 {
		t.Errorf("the robot's traceparent was continued, want a new trace:\n%s", describe(got))
	}
}

// annotate sets an annotation of the Deployment web as the user of
// kubeconfig, sending a sampled traceparent of traceID.
func annotate(t *testing.T, kubeconfig, namespace, traceID, value string) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	traceparent := "00-" + traceID + "-00f067aa0ba902b7-01"
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.Header.Set("traceparent", traceparent)
			return rt.RoundTrip(r)
		})
	})
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"metadata":{"annotations":{"example.com/traced-by":"` + value + `"}}}`)
	if _, err := client.AppsV1().Deployments(namespace).Patch(t.Context(), "web", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("annotating web as %s: %v", value, err)
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// spansOf returns the spans of the trace traceID.
func spansOf(spans []span, traceID string) []span {
	var out []span
	for _, s := range spans {
		if s.TraceID == traceID {
			out = append(out, s)
		}
	}
	return out
}

// reviews returns apply-hygiene's validating reviews of UPDATEs in
// namespace, in the order received.
func reviews(spans []span, namespace string) []span {
	var out []span
	for _, s := range spans {
		if s.Service == "apply-hygiene" && s.Name == "apply-hygiene /validate" &&
			s.Attributes["k8s.namespace.name"] == namespace && s.Attributes["k8s.admission.operation"] == "UPDATE" {
			out = append(out, s)
		}
	}
	return out
}
