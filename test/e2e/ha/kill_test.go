package ha_test

import (
	"context"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// cutOff are the causes of a call that a SIGKILL cut off mid-request: the
// connection ended before the answer came.
// A replica killed with SIGKILL (a crash, an OOM kill, a node lost), one
// at a time while 8 clients apply with failurePolicy Fail: the load
// balancer stops sending it connections and the API server's next calls
// go to the other replica. No write fails, except one whose review was in
// flight on the replica at the moment it was killed: the API server does
// not retry a webhook call (a POST), so that write fails with the cause
// "unexpected EOF" and changes nothing. The test allows exactly those (a
// cut-off cause, and a kill while the apply ran), counts them, and fails
// on any other failure. The load balancer's count of connections cut off
// with bytes unanswered is reported beside them, not compared: one HTTP/2
// connection carries several calls.
func TestOneReplicaKilledAtATime(t *testing.T) {
	f := framework.New(t)
	w := framework.Webhook(t)
	n := framework.LoadApplies(t, clients)
	before := w.LB().Stats()
	var kills record
	loads := f.ApplyLoad(t, clients, n/clients, killOneAtATime(w, &kills))
	inFlight := 0
	for i := range loads {
		l := &loads[i]
		var others []framework.FailedApply
		for _, fa := range l.Failures {
			if cutOffByAKill(fa, kills.times()) {
				inFlight++
				continue
			}
			others = append(others, fa)
		}
		l.Failures = others
	}
	failed := report(t, f, loads)
	stats := w.LB().Stats().Sub(before)
	t.Logf("%d applies, %d failed, %d cut off in flight (%d kills of one replica at a time; connections per replica %v, "+
		"%d connections cut off with bytes unanswered, %d dials redispatched)",
		n, failed, inFlight, len(kills.times()), stats.Connections, stats.CutOff, stats.DialFailures)
	checkKills(t, w, kills.times(), stats)
}

// The same kills under the chart's default failurePolicy Ignore: no write
// fails. A review cut off by a kill fails open: the API server lets that
// write through unreviewed and counts it in
// apiserver_admission_webhook_fail_open_count, which the run reports.
func TestOneReplicaKilledAtATimeUnderIgnore(t *testing.T) {
	f := framework.New(t)
	w := framework.Webhook(t)
	framework.WithFailurePolicy(t, "Ignore")
	n := framework.LoadApplies(t, clients)
	before, openBefore := w.LB().Stats(), failedOpen(t, f)
	var kills record
	loads := f.ApplyLoad(t, clients, n/clients, killOneAtATime(w, &kills))
	failed := report(t, f, loads)
	stats := w.LB().Stats().Sub(before)
	t.Logf("%d applies, %d failed (%d kills of one replica at a time; %d webhook calls failed open; connections per replica %v, "+
		"%d dials redispatched)", n, failed, len(kills.times()), failedOpen(t, f)-openBefore, stats.Connections, stats.DialFailures)
	checkKills(t, w, kills.times(), stats)
}

// killOneAtATime is the disruption of the kill runs: one replica at a
// time killed with SIGKILL every ~2s and started again; kills records
// when.
func killOneAtATime(w *devenv.Webhook, kills *record) func(ctx context.Context, done <-chan struct{}) error {
	return func(ctx context.Context, done <-chan struct{}) error {
		at, err := oneAtATime(ctx, done, w, 2*time.Second, func(_ context.Context, r *devenv.Replica) error { return r.Kill() })
		kills.set(at)
		return err
	}
}

// checkKills fails t unless each replica was killed at least twice during
// the applies while the other always served.
func checkKills(t *testing.T, w *devenv.Webhook, kills []time.Time, stats devenv.LoadBalancerStats) {
	t.Helper()
	if len(kills) < 2*len(w.Replicas()) {
		t.Errorf("%d kills during the applies, want at least two of each replica", len(kills))
	}
	if stats.NoReadyReplica > 0 {
		t.Errorf("the load balancer found no ready replica for %d connections, want 0: one replica always runs", stats.NoReadyReplica)
	}
}

// cutOffByAKill reports whether fa failed because its webhook call was cut
// off mid-request while a kill happened during the apply.
func cutOffByAKill(fa framework.FailedApply, kills []time.Time) bool {
	if cause, ok := framework.WebhookCallCause(fa.Stderr); !ok || !framework.CutOffInFlight(cause) {
		return false
	}
	for _, k := range kills {
		if !k.Before(fa.Start) && !k.After(fa.End) {
			return true
		}
	}
	return false
}
