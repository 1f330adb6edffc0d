package haaudit_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// retryAtMost is the longest wait between two attempts of client-go's
// leader election: the retry period with its jitter factor, plus half a
// second for the attempt's own calls to the API server on a busy machine.
const retryAtMost = time.Duration(float64(retryPeriod)*(1+leaderelection.JitterFactor)) + time.Second/2

// The audit leader is killed (SIGKILL): the other replica takes the lease
// once it expired, within the lease duration of the leader's last
// renewal, plus client-go's two jittered retries: one to see the last
// renewal, one to take the lease.
func TestAuditLeaderKilledHandsOverWithinTheLease(t *testing.T) {
	handOver(t, func(r *devenv.Replica) error { return r.Kill() }, leaseDuration+2*retryAtMost)
}

// The audit leader shuts down (SIGTERM): it releases the lease on its way
// out, and the other replica takes it at its next attempt.
func TestAuditLeaderShutDownHandsOverAtOnce(t *testing.T) {
	handOver(t, func(r *devenv.Replica) error { return r.Terminate(30 * time.Second) }, retryAtMost)
}

// handOver disrupts the audit leader a second after one of its scans and
// checks that the other replica leads within within, that its first scan
// comes an interval after the old leader's last one (not at once), that
// across replicas there is one scan and one event per interval, and that
// only the auditing replica exports the findings.
func handOver(t *testing.T, disrupt func(*devenv.Replica) error, within time.Duration) {
	f := framework.New(t)
	w := framework.Webhook(t)
	ctx := t.Context()
	f.InstallOpenReportsCRDs(t)
	created := time.Now()
	f.Kubectl.Run(t, "create", "deployment", "made-imperatively", "--image=nginx:1.27").MustSucceed(t)

	old, _ := waitLeader(t, w, 30*time.Second)
	t.Cleanup(func() {
		if err := old.Start(context.Background()); err != nil {
			t.Errorf("restarting replica %d: %v", old.Index, err)
		}
	})
	framework.Eventually(t, 3*interval, "the leader to export the finding", func(ctx context.Context) (bool, error) {
		return slices.Equal(findingsExporters(ctx, w, f.Namespace), []int{old.Index}), nil
	})
	// A second after the leader's next scan: its event is sent.
	_, before := lastScan(ctx, t, f)
	framework.Eventually(t, 2*interval, "the leader's next scan", func(ctx context.Context) (bool, error) {
		_, started := lastScan(ctx, t, f)
		return started.After(before), nil
	})
	time.Sleep(time.Second)
	oldHolder, oldStart := lastScan(ctx, t, f)
	if oldHolder != old.Name() {
		t.Fatalf("the schedule lease names %q as the last auditor, want the leader %s", oldHolder, old.Name())
	}

	oldIdentity, _, _, err := election(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	watch := watchElection(ctx, f, oldIdentity)
	if err := disrupt(old); err != nil {
		t.Fatal(err)
	}
	leader, _ := waitLeader(t, w, leaseDuration+10*time.Second)
	if leader == old {
		t.Fatalf("replica %d leads again after it was disrupted", old.Index)
	}
	lastRenewal, acquired, err := watch()
	if err != nil {
		t.Fatal(err)
	}
	handOverTime := acquired.Sub(lastRenewal)
	if handOverTime > within {
		t.Errorf("replica %d acquired the audit lease %s after replica %d last renewed it, want within %s", leader.Index,
			handOverTime.Round(time.Millisecond), old.Index, within)
	}

	framework.Eventually(t, 2*interval+within, "a scan by the new leader", func(ctx context.Context) (bool, error) {
		holder, _ := lastScan(ctx, t, f)
		return holder == leader.Name(), nil
	})
	_, newStart := lastScan(ctx, t, f)
	if gap := newStart.Sub(oldStart); gap < interval-100*time.Millisecond {
		t.Errorf("the new leader scanned %s after the old leader's last scan, want an interval (%s) after it", gap.Round(time.Millisecond), interval)
	}

	// The old replica comes back as a follower: it exports no findings.
	if err := old.Start(ctx); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*interval, "the new leader to export the finding", func(ctx context.Context) (bool, error) {
		return slices.Equal(findingsExporters(ctx, w, f.Namespace), []int{leader.Index}), nil
	})
	if got := leaders(ctx, w); !slices.Equal(got, []int{leader.Index}) {
		t.Errorf("replicas leading after the restart: %v, want only %d", got, leader.Index)
	}

	time.Sleep(2 * time.Second) // the last scan's event is sent
	all := scans(t, w)
	n := checkOncePerInterval(t, all, created)
	seenScans, unsure := 0, 0
	for _, s := range all {
		switch {
		case s.finished.Before(created):
		case s.finished.Before(created.Add(time.Second)):
			unsure++ // it may have listed before the create
		default:
			seenScans++
		}
	}
	events := eventCount(ctx, t, f, "made-imperatively", "MissingLastApplied")
	if events < seenScans || events > seenScans+unsure {
		t.Errorf("%d MissingLastApplied events on deployment/made-imperatively, want one per scan that saw it: %d (+%d that may have)", events, seenScans, unsure)
	}
	// Both replicas publish the same Report by server-side apply: the
	// hand-over leaves one Report with the finding once.
	want := []string{"apply-hygiene: missing-last-applied Deployment/made-imperatively"}
	if got := reportResults(t, f); !slices.Equal(got, want) {
		t.Errorf("the namespace's Reports after the hand-over: %q, want %q", got, want)
	}
	t.Logf("hand-over from replica %d to %d in %s; %d scans since the create, one per interval; %d events; findings exported by replica %d only; one Report with one result",
		old.Index, leader.Index, handOverTime.Round(time.Millisecond), n, events, leader.Index)
}

// watchElection polls the leader-election Lease every 50ms until the
// returned function is called, which returns the old holder's last
// renewal (or its release, which empties the holder) and when the next
// holder acquired the lease.
func watchElection(ctx context.Context, f *framework.Framework, oldIdentity string) func() (lastRenewal, acquired time.Time, err error) {
	stop, done := make(chan struct{}), make(chan struct{})
	var last, next time.Time
	var readErr error
	go func() {
		defer close(done)
		for {
			holder, acq, renewed, err := election(ctx, f)
			switch {
			case err != nil:
				readErr = err
			case holder == oldIdentity || holder == "":
				last = renewed
			case next.IsZero():
				next = acq
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return func() (time.Time, time.Time, error) {
		time.Sleep(100 * time.Millisecond)
		close(stop)
		<-done
		if readErr == nil && (last.IsZero() || next.IsZero()) {
			readErr = fmt.Errorf("the lease changed hands unseen (last renewal %s, next acquired %s)", last, next)
		}
		return last, next, readErr
	}
}
