package ha_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

const clients = 8

// disruption is what happens to one replica in each round of a run.
type disruption func(ctx context.Context, r *devenv.Replica) error

// oneAtATime disrupts the replicas in turn, one at a time, every up, until
// done is closed: it waits until every replica is ready behind the load
// balancer, disrupts the next one, and waits for it to be ready again. It
// returns when each disruption began.
func oneAtATime(ctx context.Context, done <-chan struct{}, w *devenv.Webhook, up time.Duration, disrupt disruption) ([]time.Time, error) {
	var at []time.Time
	for i := 0; ; i++ {
		select {
		case <-done:
			return at, nil
		case <-ctx.Done():
			return at, ctx.Err()
		case <-time.After(up):
		}
		if err := allReady(ctx, w); err != nil {
			return at, err
		}
		r := w.Replicas()[i%len(w.Replicas())]
		at = append(at, time.Now())
		if err := disrupt(ctx, r); err != nil {
			return at, err
		}
		if err := r.Start(ctx); err != nil {
			return at, err
		}
	}
}

// allReady waits until the load balancer sends connections to every
// replica.
func allReady(ctx context.Context, w *devenv.Webhook) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ready := 0
		for i := range w.Replicas() {
			if w.LB().Ready(i) {
				ready++
			}
		}
		if ready == len(w.Replicas()) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d replicas ready behind the load balancer after 30s", ready, len(w.Replicas()))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(devenv.ProbePeriod):
		}
	}
}

// record is a disruption's start times, shared with the test.
type record struct {
	mu sync.Mutex
	at []time.Time
}

func (r *record) set(at []time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.at = at
}

func (r *record) times() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.at
}

// report counts a run's failed applies, fails t on every one, and on
// stderr printed by a successful apply, and checks that every Deployment
// is as its last successful apply asked (a failed apply changes nothing).
func report(t *testing.T, f *framework.Framework, loads []framework.ClientLoad) (failed int) {
	t.Helper()
	for _, l := range loads {
		for _, fa := range l.Failures {
			failed++
			t.Errorf("%s: an apply running from %s to %s failed:\n%s", l.Name,
				fa.Start.Format("15:04:05.000"), fa.End.Format("15:04:05.000"), fa.Stderr)
		}
		for _, stderr := range l.StderrOK {
			t.Errorf("%s: a successful apply printed on stderr:\n%s", l.Name, stderr)
		}
		f.CheckApplied(t, l.Name, l.LastOK)
	}
	return failed
}

// failedOpen is the API server's count of apply-hygiene's webhook calls
// that failed open (apiserver_admission_webhook_fail_open_count, summed
// over both webhooks).
func failedOpen(t *testing.T, f *framework.Framework) int {
	t.Helper()
	return f.WebhookCalls(t).FailedOpen
}
