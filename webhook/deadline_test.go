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
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// A review that outlasts the API server's timeout is answered before it,
// as the failure policy says, with a message that says why; without a
// timeout in the URL the review runs to its end.
func TestSlowReviewIsAnsweredBeforeTheAPIServerTimesOut(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("testdata", "reviews", "deployment-edit.json"))
	if err != nil {
		t.Fatal(err)
	}
	const tooSlow = "the review did not finish within 400ms (80 % of the API server's timeout of 500ms)"
	tests := map[string]struct {
		query    string
		failOpen bool
		want     answer
	}{
		"failure policy Ignore": {query: "?timeout=500ms", failOpen: true,
			want: answer{Status: http.StatusOK, Allowed: true,
				Warnings: []string{"apply-hygiene could not review this request and allowed it (failure policy Ignore): " + tooSlow}}},
		"failure policy Fail": {query: "?timeout=500ms", failOpen: false,
			want: answer{Status: http.StatusOK, Message: "apply-hygiene could not review this request: " + tooSlow}},
		"no timeout sent": {query: "", failOpen: true,
			want: answer{Status: http.StatusOK, Allowed: true}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			// The evaluator ignores its context: like merge, it runs on
			// past the deadline. It ends when the test does, or after 1 s
			// for the review that has no deadline.
			release := make(chan struct{})
			t.Cleanup(func() { close(release) })
			slow := EvaluatorFunc(func(context.Context, *policy.Input) ([]policy.Decision, error) {
				select {
				case <-release:
				case <-time.After(time.Second):
				}
				return nil, nil
			})
			cluster := loadCluster(t, filepath.Join("testdata", "reviews", "deployment-edit.cluster.json"))
			srv := httptest.NewServer(NewHTTPHandler(NewReviewer(slow, cluster, WithFailOpen(tc.failOpen)).Validating()))
			defer srv.Close()
			resp, err := http.Post(srv.URL+tc.query, "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			if got := readAnswer(t, resp); !equalAnswers(got, tc.want) {
				t.Errorf("answer = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// answer is what a user sees of an admission answer.
type answer struct {
	Status   int
	Allowed  bool
	Message  string
	Warnings []string
}

func readAnswer(t *testing.T, resp *http.Response) answer {
	t.Helper()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(raw, &review); err != nil || review.Response == nil {
		t.Fatalf("answer %s is no AdmissionReview with a response: %v", raw, err)
	}
	got := answer{Status: resp.StatusCode, Allowed: review.Response.Allowed, Warnings: review.Response.Warnings}
	if review.Response.Result != nil {
		got.Message = review.Response.Result.Message
	}
	return got
}

func equalAnswers(a, b answer) bool {
	if a.Status != b.Status || a.Allowed != b.Allowed || a.Message != b.Message || len(a.Warnings) != len(b.Warnings) {
		return false
	}
	for i := range a.Warnings {
		if a.Warnings[i] != b.Warnings[i] {
			return false
		}
	}
	return true
}
