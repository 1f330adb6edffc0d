package failures_test

import (
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// slowAPI is how long the proxy holds each answer of the API server to the
// server while a test slows it: beyond the 4 s a review may take (80 % of
// the chart's timeoutSeconds, 5), short enough that the server's watches
// and its leader lease ride it out.
const slowAPI = 6 * time.Second

// tooSlow is the error of a review that did not finish in time.
const tooSlow = "the review did not finish within 4s (80 % of the API server's timeout of 5s)"

// The API server slow to answer the server's own reads: a review of
// kubectl scale must read the Deployment (the /scale request carries only
// the replica count). With the reads held beyond the review's deadline,
// the server answers as its failure policy says before the API server
// gives up on it: Ignore lets the scale through with a warning, Fail
// rejects it. Before and after, with the reads at full speed, the same
// write is reviewed: denied as an imperative edit.
func TestAPIServerSlow(t *testing.T) {
	tests := map[string]struct {
		policy       string
		wantExitCode int
		wantStdout   []string
		wantStderr   []string
		wantReplicas int
	}{
		"failurePolicy Ignore: the write goes through, with a warning": {
			policy:       "Ignore",
			wantStdout:   []string{"deployment.apps/web scaled"},
			wantStderr:   []string{"Warning: apply-hygiene could not review this request and allowed it (failure policy Ignore): " + tooSlow},
			wantReplicas: 5,
		},
		"failurePolicy Fail: the write is rejected": {
			policy:       "Fail",
			wantExitCode: 1,
			wantStderr: []string{`Error from server: admission webhook "validate.apply-hygiene.io" ` +
				"denied the request: apply-hygiene could not review this request: " + tooSlow},
			wantReplicas: 3,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			framework.WithFailurePolicy(t, tc.policy)
			f := newWeb(t)
			wantReviewed(t, f, 5, 3)

			restore := apiServer.Slow(slowAPI)
			start := time.Now()
			res := scale(t, f, 5)
			took := time.Since(start)
			restore()
			if res.ExitCode != tc.wantExitCode {
				t.Errorf("kubectl scale exited %d, want %d", res.ExitCode, tc.wantExitCode)
			}
			framework.WantLines(t, res.Stdout, tc.wantStdout...)
			framework.WantLines(t, res.Stderr, tc.wantStderr...)
			t.Logf("kubectl scale took %s with the API server's answers held for %s", took.Round(time.Millisecond), slowAPI)
			if took < 4*time.Second {
				t.Errorf("kubectl scale took %s, want at least the review's 4 s deadline", took)
			}
			wantReplicas(t, f, tc.wantReplicas)

			// At full speed again the same kind of write is reviewed.
			wantReviewed(t, f, 7, tc.wantReplicas)
		})
	}
}
