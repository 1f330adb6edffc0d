package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
)

// replica is one server's Runner, started as the leader.
type replica struct {
	runner *Runner
	reg    *prometheus.Registry
	stop   context.CancelFunc
	done   chan error
}

// startReplica starts a Runner on clk with its own registry, as a replica
// that became the leader.
func startReplica(t *testing.T, client *dynamicfake.FakeDynamicClient, clk *testingclock.FakeClock, rec EventRecorder, schedule Schedule) *replica {
	t.Helper()
	reg := prometheus.NewRegistry()
	r, err := NewRunner(NewScanner(client, testAnalyzer(t), testEngine(t)), RunnerOptions{Registry: reg, Recorder: rec, Schedule: schedule})
	if err != nil {
		t.Fatal(err)
	}
	r.clock = clk
	ctx, cancel := context.WithCancel(t.Context())
	rp := &replica{runner: r, reg: reg, stop: cancel, done: make(chan error, 1)}
	go func() { rp.done <- r.Start(ctx) }()
	t.Cleanup(func() { rp.exit(t) })
	return rp
}

// exit stops the Runner, as the manager of a replica that lost the
// leader election, and waits for Start to return.
func (rp *replica) exit(t *testing.T) {
	t.Helper()
	rp.stop()
	if err := <-rp.done; err != nil {
		t.Errorf("Start returned %v", err)
	}
	rp.done <- nil
}

// waitIdle waits until the running Runner waits for its next scan on clk.
func waitIdle(t *testing.T, clk *testingclock.FakeClock) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !clk.HasWaiters(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the runner did not come to wait for its next scan")
		}
	}
}

// series returns every audit series of reg as "name{labels} value".
func series(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, mf := range families {
		if !strings.HasPrefix(mf.GetName(), "apply_hygiene_audit_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := []string{}
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			out = append(out, fmt.Sprintf("%s{%s} %g", mf.GetName(), strings.Join(labels, ","), m.GetGauge().GetValue()))
		}
	}
	sort.Strings(out)
	return out
}

// scannedAt are the series of a replica whose last scan of twoDrifted
// finished at at.
func scannedAt(at time.Time) []string {
	return []string{
		"apply_hygiene_audit_findings{namespace=shop,rule=imperative-edit} 1",
		"apply_hygiene_audit_findings{namespace=shop,rule=missing-last-applied} 1",
		fmt.Sprintf("apply_hygiene_audit_last_success_timestamp_seconds{} %g", float64(at.Unix())),
		"apply_hygiene_audit_objects{} 2",
	}
}

var bothEvents = []string{
	"Warning ImperativeEdit Audit Deployment shop/web(uid-web)",
	"Warning MissingLastApplied Audit Deployment shop/made(uid-made)",
}

// TestHandOverScansOncePerInterval kills the leader 10 minutes after its
// scan; the replica that takes over scans (and records events) when the
// interval is up, not at once, and exports the audit series only from its
// own first scan. Without a Schedule (the row that shows what the Schedule
// fixes) the new leader scans at once and records every event again.
func TestHandOverScansOncePerInterval(t *testing.T) {
	type step struct {
		at     time.Duration
		events []string
		// seriesB are the audit series of the new leader.
		seriesB []string
	}
	tests := map[string]struct {
		schedule      bool
		afterHandOver []step
		lease         string
	}{
		"with the schedule Lease the new leader waits the rest of the interval": {
			schedule: true,
			afterHandOver: []step{
				{at: 10 * time.Minute, events: []string{}, seriesB: []string{}},
				{at: 59 * time.Minute, events: []string{}, seriesB: []string{}},
				{at: 60 * time.Minute, events: bothEvents, seriesB: scannedAt(t0.Add(time.Hour))},
				{at: 119 * time.Minute, events: []string{}, seriesB: scannedAt(t0.Add(time.Hour))},
				{at: 120 * time.Minute, events: bothEvents, seriesB: scannedAt(t0.Add(2 * time.Hour))},
			},
			lease: "replica-b 14:00:00 14:00:00 3600s 1",
		},
		"without a schedule the new leader scans at once and repeats the events": {
			afterHandOver: []step{
				{at: 10 * time.Minute, events: bothEvents, seriesB: scannedAt(t0.Add(10 * time.Minute))},
				{at: 60 * time.Minute, events: []string{}, seriesB: scannedAt(t0.Add(10 * time.Minute))},
			},
			lease: "none",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			client := newFakeClient(twoDrifted(t)...)
			leases := fake.NewClientset()
			clk := testingclock.NewFakeClock(t0)
			rec := &recorder{}
			scheduleOf := func(identity string) Schedule {
				if !tc.schedule {
					return nil
				}
				return NewLeaseSchedule(leases.CoordinationV1(), leaseNamespace, leaseName, identity)
			}

			a := startReplica(t, client, clk, rec, scheduleOf("replica-a"))
			waitIdle(t, clk)
			if diff := cmp.Diff(bothEvents, summary(rec.take())); diff != "" {
				t.Fatalf("first leader's scan: events (-want +got):\n%s", diff)
			}
			clk.SetTime(t0.Add(10 * time.Minute))
			a.exit(t)

			b := startReplica(t, client, clk, rec, scheduleOf("replica-b"))
			for _, s := range tc.afterHandOver {
				clk.SetTime(t0.Add(s.at))
				waitIdle(t, clk)
				if diff := cmp.Diff(s.events, summary(rec.take())); diff != "" {
					t.Errorf("at %v: events (-want +got):\n%s", s.at, diff)
				}
				if diff := cmp.Diff(s.seriesB, series(t, b.reg)); diff != "" {
					t.Errorf("at %v: new leader's series (-want +got):\n%s", s.at, diff)
				}
			}
			if diff := cmp.Diff(tc.lease, leaseSummary(t, leases)); diff != "" {
				t.Errorf("schedule Lease (-want +got):\n%s", diff)
			}
		})
	}
}

// scheduleCalls is a Schedule that answers LastRun with last and err, and
// keeps the starts Record is given.
type scheduleCalls struct {
	last      time.Time
	lastErr   error
	recordErr error
	recorded  []string
}

func (s *scheduleCalls) schedule() Schedule {
	return ScheduleFuncs{
		LastRunFunc: func(context.Context) (time.Time, error) { return s.last, s.lastErr },
		RecordFunc: func(_ context.Context, scan ScanRecord) error {
			s.recorded = append(s.recorded, scan.Started.Format(time.TimeOnly))
			return s.recordErr
		},
	}
}

// TestStartKeepsItsPaceWhateverTheSchedule checks that the Schedule's
// bookkeeping never stops or speeds up the audit: an unreadable or
// unwritable Schedule leaves the Runner scanning every interval, and a
// failed scan is retried an interval later and not recorded.
func TestStartKeepsItsPaceWhateverTheSchedule(t *testing.T) {
	type step struct {
		at       time.Duration
		scans    int
		recorded []string
	}
	tests := map[string]struct {
		schedule scheduleCalls
		listErr  error
		steps    []step
	}{
		"an unreadable schedule: scans at once and every interval": {
			schedule: scheduleCalls{lastErr: fmt.Errorf("forbidden")},
			steps: []step{
				{at: 0, scans: 1, recorded: []string{"12:00:00"}},
				{at: 59 * time.Minute, scans: 1, recorded: []string{"12:00:00"}},
				{at: 60 * time.Minute, scans: 2, recorded: []string{"12:00:00", "13:00:00"}},
			},
		},
		"an unwritable schedule: scans every interval all the same": {
			schedule: scheduleCalls{recordErr: fmt.Errorf("forbidden")},
			steps: []step{
				{at: 0, scans: 1, recorded: []string{"12:00:00"}},
				{at: 30 * time.Minute, scans: 1, recorded: []string{"12:00:00"}},
				{at: 60 * time.Minute, scans: 2, recorded: []string{"12:00:00", "13:00:00"}},
			},
		},
		"a scan 10 minutes before the start: the first scan 50 minutes later": {
			schedule: scheduleCalls{last: t0.Add(-10 * time.Minute)},
			steps: []step{
				{at: 0, scans: 0, recorded: nil},
				{at: 49 * time.Minute, scans: 0, recorded: nil},
				{at: 50 * time.Minute, scans: 1, recorded: []string{"12:50:00"}},
			},
		},
		"a failed scan: not recorded, retried an interval later": {
			listErr: fmt.Errorf("connection refused"),
			steps: []step{
				{at: 0, scans: 1, recorded: nil},
				{at: 59 * time.Minute, scans: 1, recorded: nil},
				{at: 60 * time.Minute, scans: 2, recorded: nil},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			client := newFakeClient(twoDrifted(t)...)
			scans := 0
			client.PrependReactor("list", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
				scans++
				return tc.listErr != nil, nil, tc.listErr
			})
			clk := testingclock.NewFakeClock(t0)
			calls := tc.schedule
			startReplica(t, client, clk, nil, calls.schedule())
			for _, s := range tc.steps {
				clk.SetTime(t0.Add(s.at))
				waitIdle(t, clk)
				if scans != s.scans {
					t.Errorf("at %v: %d scans, want %d", s.at, scans, s.scans)
				}
				if diff := cmp.Diff(s.recorded, calls.recorded); diff != "" {
					t.Errorf("at %v: recorded starts (-want +got):\n%s", s.at, diff)
				}
			}
		})
	}
}

// TestScanLogNamesTheRecordedStart checks that the "audit scan finished"
// line carries the start the schedule Lease records, at full precision, so
// that a replica's log can be matched with the Lease.
func TestScanLogNamesTheRecordedStart(t *testing.T) {
	var mu sync.Mutex
	var lines []map[string]any
	logger := funcr.NewJSON(func(obj string) {
		var line map[string]any
		if err := json.Unmarshal([]byte(obj), &line); err != nil {
			t.Errorf("log line %s: %v", obj, err)
		}
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, line)
	}, funcr.Options{})
	leases := fake.NewClientset()
	started := t0.Add(1234567 * time.Nanosecond)
	clk := testingclock.NewFakeClock(started)
	r, err := NewRunner(NewScanner(newFakeClient(twoDrifted(t)...), testAnalyzer(t), testEngine(t)), RunnerOptions{
		Schedule: NewLeaseSchedule(leases.CoordinationV1(), leaseNamespace, leaseName, "replica-a"),
	})
	if err != nil {
		t.Fatal(err)
	}
	r.clock = clk
	ctx, cancel := context.WithCancel(logr.NewContext(t.Context(), logger))
	done := make(chan error, 1)
	go func() { done <- r.Start(ctx) }()
	waitIdle(t, clk)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start returned %v", err)
	}
	lease, err := leases.CoordinationV1().Leases(leaseNamespace).Get(t.Context(), leaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"level": 0.0, "logger": "audit", "msg": "audit scan finished", "objects": 2.0, "findings": 2.0, "events": 0.0, "errors": 0.0,
		"duration": "0s", "started": "2024-05-01T12:00:00.001234567Z", "finished": "2024-05-01T12:00:00.001234567Z",
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]map[string]any{want}, lines); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if got := lease.Spec.AcquireTime.UTC().Format(time.RFC3339Nano); got != "2024-05-01T12:00:00.001234567Z" {
		t.Errorf("acquireTime = %s, want the logged start", got)
	}
}

// globalLog receives controller-runtime's global logger, set once for the
// test binary.
var globalLog struct {
	once  sync.Once
	mu    sync.Mutex
	lines []string
}

// TestStartLogsWithoutALoggerInItsContext starts the Runner as the
// manager does, with a context that holds no logger: it logs to
// controller-runtime's logger all the same.
func TestStartLogsWithoutALoggerInItsContext(t *testing.T) {
	globalLog.once.Do(func() {
		crlog.SetLogger(funcr.New(func(prefix, args string) {
			globalLog.mu.Lock()
			defer globalLog.mu.Unlock()
			globalLog.lines = append(globalLog.lines, prefix+" "+args)
		}, funcr.Options{}))
	})
	clk := testingclock.NewFakeClock(t0)
	r, err := NewRunner(NewScanner(newFakeClient(twoDrifted(t)...), testAnalyzer(t), testEngine(t)), RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.clock = clk
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Start(ctx) }()
	waitIdle(t, clk)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start returned %v", err)
	}
	globalLog.mu.Lock()
	defer globalLog.mu.Unlock()
	want := `audit "level"=0 "msg"="audit scan finished" "objects"=2 "findings"=2`
	if !slices.ContainsFunc(globalLog.lines, func(l string) bool { return strings.HasPrefix(l, want) }) {
		t.Errorf("controller-runtime's logger got %q, want a line starting %q", globalLog.lines, want)
	}
}
