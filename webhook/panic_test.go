package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// TestPanicsAreAnsweredAsTheFailurePolicySays panics in the policy engine
// and requires the answer of any other failed review: allowed with a
// warning under failure policy Ignore (a panic denied the write, whatever
// the failure policy, as controller-runtime answers a panic: code 500),
// code 500 under Fail, the request's uid either way, and one count of
// apply_hygiene_review_errors_total{reason="panic"}, so that the fail-open
// alert fires. A review under the API server's timeout (every real request
// sends ?timeout=) runs on its own goroutine: its panic is answered the
// same, and the process lives on.
func TestPanicsAreAnsweredAsTheFailurePolicySays(t *testing.T) {
	edit := readFile(t, filepath.Join("testdata", "reviews", "deployment-edit.json"))
	var sent admissionv1.AdmissionReview
	if err := json.Unmarshal(edit, &sent); err != nil {
		t.Fatal(err)
	}
	cluster := loadCluster(t, filepath.Join("testdata", "reviews", "deployment-edit.cluster.json"))
	panics := map[string]policy.EvaluatorFunc{
		"a string": func(context.Context, *policy.Input) ([]policy.Decision, error) { panic("boom") },
		"an error": func(context.Context, *policy.Input) ([]policy.Decision, error) { panic(error(nil)) },
	}
	for _, tc := range []struct {
		name     string
		failOpen bool
		path     string
		want     admissionv1.AdmissionResponse
	}{{
		name:     "Ignore",
		failOpen: true,
		path:     "/validate",
		want: admissionv1.AdmissionResponse{Allowed: true, Result: &metav1.Status{Code: http.StatusOK}, Warnings: []string{
			"apply-hygiene could not review this request and allowed it (failure policy Ignore): panic: boom [recovered]"}},
	}, {
		name:     "Ignore, under the API server's timeout",
		failOpen: true,
		path:     "/validate?timeout=10s",
		want: admissionv1.AdmissionResponse{Allowed: true, Result: &metav1.Status{Code: http.StatusOK}, Warnings: []string{
			"apply-hygiene could not review this request and allowed it (failure policy Ignore): panic: boom [recovered]"}},
	}, {
		name: "Fail, under the API server's timeout",
		path: "/validate?timeout=10s",
		want: admissionv1.AdmissionResponse{Result: &metav1.Status{Code: http.StatusInternalServerError,
			Message: "apply-hygiene could not review this request: panic: boom [recovered]"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			metrics, err := NewMetrics(reg, nil)
			if err != nil {
				t.Fatal(err)
			}
			r := NewReviewer(panics["a string"], cluster, WithFailOpen(tc.failOpen), WithMetrics(metrics))
			got := serve(r.ValidatingEndpoint(), func() *http.Request {
				req := httptest.NewRequest(http.MethodPost, tc.path, bytes.NewReader(edit))
				req.Header.Set("Content-Type", "application/json")
				return req
			})
			if got.Status != http.StatusOK {
				t.Fatalf("HTTP %d %s, want 200", got.Status, got.Body)
			}
			var answer admissionv1.AdmissionReview
			if err := json.Unmarshal([]byte(got.Body), &answer); err != nil {
				t.Fatalf("the answer %s: %v", got.Body, err)
			}
			want := tc.want
			want.UID = sent.Request.UID
			if diff := cmp.Diff(want, *answer.Response); diff != "" {
				t.Errorf("the answer (-want +got):\n%s", diff)
			}
			if n := testutil.ToFloat64(metrics.errors.WithLabelValues("validate", "panic")); n != 1 {
				t.Errorf("review errors with reason panic: %v, want 1", n)
			}
		})
	}
	for name, evaluator := range panics {
		got := serve(NewReviewer(evaluator, cluster).ValidatingEndpoint(), postJSON(edit))
		if got.Status != http.StatusOK || !bytes.Contains([]byte(got.Body), []byte(`"allowed":true`)) {
			t.Errorf("a panic with %s was answered %d %s, want an allowance (the default failure policy is Ignore)", name, got.Status, got.Body)
		}
	}
}

// TestPanicPastTheDeadlineIsCounted: a review that panics after its
// deadline was answered as a timeout already; the panic is still counted
// (reason "panic"), so that the alert points at a bug, not at the CPU.
func TestPanicPastTheDeadlineIsCounted(t *testing.T) {
	edit := readFile(t, filepath.Join("testdata", "reviews", "deployment-edit.json"))
	cluster := loadCluster(t, filepath.Join("testdata", "reviews", "deployment-edit.cluster.json"))
	late := policy.EvaluatorFunc(func(context.Context, *policy.Input) ([]policy.Decision, error) {
		time.Sleep(300 * time.Millisecond)
		panic("boom")
	})
	metrics, err := NewMetrics(prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := NewReviewer(late, cluster, WithMetrics(metrics))
	got := serve(r.ValidatingEndpoint(), func() *http.Request {
		req := httptest.NewRequest(http.MethodPost, "/validate?timeout=100ms", bytes.NewReader(edit))
		req.Header.Set("Content-Type", "application/json")
		return req
	})
	if !bytes.Contains([]byte(got.Body), []byte("the review did not finish within 80ms")) {
		t.Fatalf("answered %d %s, want the timeout's answer", got.Status, got.Body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for testutil.ToFloat64(metrics.errors.WithLabelValues("validate", "panic")) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the panic past the deadline was not counted")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := testutil.ToFloat64(metrics.errors.WithLabelValues("validate", "timeout")); n != 1 {
		t.Errorf("timeouts: %v, want 1", n)
	}
}
