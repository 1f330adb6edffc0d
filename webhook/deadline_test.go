package webhook

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
			slow := policy.EvaluatorFunc(func(context.Context, *policy.Input) ([]policy.Decision, error) {
				select {
				case <-release:
				case <-time.After(time.Second):
				}
				return nil, nil
			})
			cluster := loadCluster(t, filepath.Join("testdata", "reviews", "deployment-edit.cluster.json"))
			srv := httptest.NewServer(NewReviewer(slow, cluster, WithFailOpen(tc.failOpen)).ValidatingEndpoint())
			defer srv.Close()
			resp, err := http.Post(srv.URL+tc.query, "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			if diff := cmp.Diff(tc.want, readAnswer(t, resp)); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}
