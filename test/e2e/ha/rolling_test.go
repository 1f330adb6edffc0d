package ha_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// A rolling upgrade while 8 clients apply with failurePolicy Fail: the
// replicas are replaced one by one (SIGTERM, graceful shutdown, a new
// process) and no write fails. Each old process exits 0.
func TestRollingUpgrade(t *testing.T) {
	f := framework.New(t)
	w := framework.Webhook(t)
	n := framework.LoadApplies(t, clients)
	before := w.LB().Stats()
	var replacements record
	loads := f.ApplyLoad(t, clients, n/clients, func(ctx context.Context, done <-chan struct{}) error {
		at, err := oneAtATime(ctx, done, w, time.Second, func(_ context.Context, r *devenv.Replica) error {
			if err := r.Terminate(30 * time.Second); err != nil {
				return err
			}
			if code := r.ExitCode(); code != 0 {
				return fmt.Errorf("replica %d exited %d after SIGTERM, want 0", r.Index, code)
			}
			return nil
		})
		replacements.set(at)
		return err
	})
	failed := report(t, f, loads)
	stats := w.LB().Stats().Sub(before)
	t.Logf("%d applies, %d failed (%d replacements of one replica at a time; connections per replica %v, %d dials failed)",
		n, failed, len(replacements.times()), stats.Connections, stats.DialFailures)
	// A replica closes its listener only --shutdown-delay after /readyz
	// failed: no connection is sent to a closed port (which in a cluster,
	// without redispatch, would fail the write).
	if stats.DialFailures > 0 {
		t.Errorf("the load balancer dialed a replica that no longer listened %d times, want 0", stats.DialFailures)
	}
	if len(replacements.times()) < 2*len(w.Replicas()) {
		t.Errorf("%d replacements during the applies, want at least two of each replica", len(replacements.times()))
	}
}
