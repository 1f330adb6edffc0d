package framework

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// Reconfigure installs the chart again with the package's values
// (WithWebhook) followed by values, which override them key by key as
// later `helm --set` values do, and restarts the server so that it reads
// the new policy configuration and failure policy. The package's values
// come back when t ends, or earlier when the test calls the returned
// restore; restore does nothing the second time.
func Reconfigure(t *testing.T, values ...string) (restore func()) {
	t.Helper()
	w, cp := Webhook(t), ControlPlane(t)
	if err := w.Reconfigure(t.Context(), cp, append(slices.Clone(env.values), values...)...); err != nil {
		t.Fatalf("reconfiguring apply-hygiene with %s: %v", strings.Join(values, ", "), err)
	}
	restored := false
	restore = func() {
		if restored {
			return
		}
		restored = true
		// Not t.Context(): it is canceled before cleanups run.
		if err := w.Reconfigure(context.Background(), cp, env.values...); err != nil {
			t.Errorf("restoring apply-hygiene's values: %v", err)
		}
	}
	t.Cleanup(restore)
	return restore
}

// WithFailurePolicy installs the chart with failurePolicy=policy until t
// ends: the webhook configurations' failurePolicy and, as the chart sets
// it from the same value, the server's --failure-policy. It does nothing
// when the package's values already have policy.
func WithFailurePolicy(t *testing.T, policy string) {
	t.Helper()
	if devenv.FailurePolicy(env.values) == policy {
		return
	}
	Reconfigure(t, "failurePolicy="+policy)
}
