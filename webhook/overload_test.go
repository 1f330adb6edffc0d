package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// blockingEvaluator holds every evaluation until release is called, and
// says on entered when one has begun. Call release before closing the
// server: httptest.Server.Close waits for the requests in flight.
func blockingEvaluator() (eval policy.EvaluatorFunc, entered <-chan struct{}, release func()) {
	released := make(chan struct{})
	var once sync.Once
	in := make(chan struct{}, 8)
	return func(context.Context, *policy.Input) ([]policy.Decision, error) {
		in <- struct{}{}
		<-released
		return nil, nil
	}, in, func() { once.Do(func() { close(released) }) }
}

// With one review holding the whole memory budget, the next is answered
// at once, unreviewed, as the failure policy says, with the request's uid,
// and counted with reason overload.
func TestReviewBeyondTheMemoryBudgetIsAnsweredAsTheFailurePolicySays(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("testdata", "reviews", "deployment-edit.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Room for one review of body, not two.
	budget := int64(len(body)) * reviewCostFactor * 3 / 2
	overloaded := "over its memory budget: " + mib(int64(len(body))*reviewCostFactor) +
		" of this review do not fit in the " + mib(budget) + " the reviews in flight may hold"
	tests := map[string]struct {
		failOpen bool
		query    string
		want     answer
	}{
		"failure policy Ignore": {failOpen: true, want: answer{Status: http.StatusOK, Allowed: true,
			Warnings: []string{"apply-hygiene could not review this request and allowed it (failure policy Ignore): " + overloaded}}},
		"failure policy Fail": {failOpen: false, want: answer{Status: http.StatusOK,
			Message: "apply-hygiene could not review this request: " + overloaded}},
		"the first review answered at its deadline but still running": {failOpen: true, query: "?timeout=100ms",
			want: answer{Status: http.StatusOK, Allowed: true,
				Warnings: []string{"apply-hygiene could not review this request and allowed it (failure policy Ignore): " + overloaded}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			metrics, err := NewMetrics(prometheus.NewRegistry(), nil)
			if err != nil {
				t.Fatal(err)
			}
			evaluator, entered, release := blockingEvaluator()
			cluster := loadCluster(t, filepath.Join("testdata", "reviews", "deployment-edit.cluster.json"))
			r := NewReviewer(evaluator, cluster, WithFailOpen(tc.failOpen), WithMetrics(metrics), WithMemoryBudget(budget))
			srv := httptest.NewServer(r.ValidatingEndpoint())
			defer srv.Close()
			defer release()

			first := make(chan error, 1)
			go func() { first <- post(srv.URL+tc.query, body) }()
			<-entered
			if tc.query != "" {
				if err := <-first; err != nil { // answered at its deadline; the review goes on
					t.Fatal(err)
				}
			}
			resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			raw := new(bytes.Buffer)
			_, _ = raw.ReadFrom(resp.Body)
			got := readAnswerBytes(t, resp.StatusCode, raw.Bytes())
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if uid := answeredUID(t, raw.Bytes()); uid != "c48bd616-60e9-4e17-9305-10681b5d247d" {
				t.Errorf("answer's uid = %q, want the request's", uid)
			}
			if got := testutil.ToFloat64(metrics.errors.WithLabelValues("validate", "overload")); got != 1 {
				t.Errorf("overload errors = %v, want 1", got)
			}
		})
	}
}

// A review that fits once the review before it is done is reviewed: the
// budget is given back.
func TestMemoryBudgetIsGivenBack(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("testdata", "reviews", "deployment-edit.json"))
	if err != nil {
		t.Fatal(err)
	}
	cluster := loadCluster(t, filepath.Join("testdata", "reviews", "deployment-edit.cluster.json"))
	r := NewReviewer(newEngine(t), cluster, WithMemoryBudget(int64(len(body))*reviewCostFactor))
	srv := httptest.NewServer(r.ValidatingEndpoint())
	defer srv.Close()
	for range 3 {
		resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		got := readAnswer(t, resp)
		_ = resp.Body.Close()
		for _, w := range got.Warnings {
			if bytes.Contains([]byte(w), []byte("memory budget")) {
				t.Fatalf("a review alone was answered as overloaded: %q", w)
			}
		}
	}
}

// A review sent without a Content-Length (chunked) costs its size, not
// that of the largest body: it is reviewed next to another.
func TestChunkedReviewCostsItsSize(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("testdata", "reviews", "deployment-edit.json"))
	if err != nil {
		t.Fatal(err)
	}
	evaluator, entered, release := blockingEvaluator()
	cluster := loadCluster(t, filepath.Join("testdata", "reviews", "deployment-edit.cluster.json"))
	r := NewReviewer(evaluator, cluster, WithMemoryBudget(int64(len(body))*reviewCostFactor*5/2))
	srv := httptest.NewServer(r.ValidatingEndpoint())
	defer srv.Close()
	defer release()
	go func() { _ = post(srv.URL, body) }()
	<-entered
	answered := make(chan answer, 1)
	go func() {
		// A reader that is not a *bytes.Reader: sent chunked.
		resp, err := http.Post(srv.URL, "application/json", io.MultiReader(bytes.NewReader(body)))
		if err != nil {
			t.Error(err)
			answered <- answer{}
			return
		}
		defer func() { _ = resp.Body.Close() }()
		answered <- readAnswer(t, resp)
	}()
	select {
	case <-entered: // reviewed
	case got := <-answered:
		t.Fatalf("the chunked review was answered without a review: %+v", got)
	}
	release()
	if got := <-answered; !got.Allowed || len(got.Warnings) > 0 {
		t.Errorf("answer %+v, want allowed without warnings", got)
	}
}

// An overloaded request that is not an AdmissionReview gets HTTP 400, as
// it would have without the budget.
func TestOverloadedMalformedReviewIsABadRequest(t *testing.T) {
	evaluator, entered, release := blockingEvaluator()
	body, err := os.ReadFile(filepath.Join("testdata", "reviews", "deployment-edit.json"))
	if err != nil {
		t.Fatal(err)
	}
	cluster := loadCluster(t, filepath.Join("testdata", "reviews", "deployment-edit.cluster.json"))
	r := NewReviewer(evaluator, cluster, WithMemoryBudget(1))
	srv := httptest.NewServer(r.ValidatingEndpoint())
	defer srv.Close()
	defer release()
	go func() { _ = post(srv.URL, body) }()
	<-entered
	resp, err := http.Post(srv.URL, "application/json", bytes.NewBufferString(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if got := readAnswer(t, resp); got.Status != http.StatusBadRequest {
		t.Errorf("status = %d, want 400; answer %+v", got.Status, got)
	}
}

func post(url string, body []byte) error {
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func readAnswerBytes(t *testing.T, status int, raw []byte) answer {
	t.Helper()
	return readAnswer(t, &http.Response{StatusCode: status, Body: io.NopCloser(bytes.NewReader(raw))})
}

func answeredUID(t *testing.T, raw []byte) string {
	t.Helper()
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(raw, &review); err != nil || review.Response == nil {
		t.Fatalf("answer %s is no AdmissionReview with a response: %v", raw, err)
	}
	return string(review.Response.UID)
}

// reviewHead reads the uid a full decode reads, without decoding the
// objects, and never panics on other input.
func FuzzReviewHead(f *testing.F) {
	for _, name := range []string{"deployment-edit.json", "deployment-apply.json"} {
		body, err := os.ReadFile(filepath.Join("testdata", "reviews", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
	}
	f.Add([]byte(`{"request":{"object":{},"uid":"x"}}`))
	f.Add([]byte(`{"kind":"AdmissionReview","request":[]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		_, uid, err := reviewHead(bytes.NewReader(body))
		lower := bytes.ToLower(body)
		var full admissionv1.AdmissionReview
		if err != nil || json.Unmarshal(body, &full) != nil || full.Request == nil ||
			bytes.Count(lower, []byte(`"uid"`)) != 1 || bytes.Count(lower, []byte(`"request"`)) != 1 {
			return // not a review, or keys that differ only in case: reviewHead only must not panic
		}
		if uid != full.Request.UID {
			t.Errorf("reviewHead = %q; want %q", uid, full.Request.UID)
		}
	})
}
