package audit

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// RunnerOptions configure a Runner.
type RunnerOptions struct {
	// Interval is the time between the starts of two scans. Without a
	// Schedule the first starts when the Runner does. Default: 1h.
	Interval time.Duration
	// Schedule keeps the start of the last scan across replicas: a Runner
	// that starts (a replica that became the leader) scans at once only
	// when no scan started within Interval, else when the interval is up.
	// Default: nil, each Runner scans when it starts.
	Schedule Schedule
	// Target is what each scan lists. Default: every namespace,
	// DefaultResources.
	Target Target
	// Registry receives the gauges apply_hygiene_audit_findings{rule,
	// namespace}, apply_hygiene_audit_objects and
	// apply_hygiene_audit_last_success_timestamp_seconds, exported only
	// after this Runner's first successful scan. Default: nil, no metrics.
	Registry prometheus.Registerer
	// Recorder records a Warning event per object and rule (reason: the
	// rule ID in CamelCase, note: the finding's message). Default: nil, no
	// events.
	Recorder EventRecorder
	// EventInterval is the least time between two events of one rule on
	// one object. Default: Interval.
	EventInterval time.Duration
	// EventBudget is the most events one scan records. Default: 100.
	EventBudget int
	// Publisher receives the report of each successful scan, after the
	// gauges and events, e.g. to write policy reports. Default: nil.
	Publisher Publisher
	// Fixer, when set, writes the fixes of each scan's findings (PlanFixes:
	// the repaired stale last-applied, the orphans' guarded removals)
	// right after the scan; the gauges, events and Publisher then get the
	// report without the findings fixed. Each object fixed gets a log line
	// and a Normal event AuditFixed (on Recorder), and the counter
	// apply_hygiene_audit_fixes_total{rule,result} (on Registry) counts the
	// findings by result: applied, conflict or error. Default: nil,
	// nothing is written.
	Fixer *Fixer
}

// DefaultInterval is the default time between two scans.
const DefaultInterval = time.Hour

// DefaultEventBudget is the default number of events per scan.
const DefaultEventBudget = 100

// Runner scans on an interval inside a controller-runtime manager, on the
// leader only, and exports the findings as metrics and events.
type Runner struct {
	scanner *Scanner
	opts    RunnerOptions
	metrics *metrics
	fixes   *prometheus.CounterVec
	events  *eventLimiter
	clock   clock.Clock
	// lastStart is when this Runner's last scan started, successful or
	// not: it paces this Runner when the Schedule is unset or unreadable.
	lastStart time.Time
}

var (
	_ manager.Runnable               = (*Runner)(nil)
	_ manager.LeaderElectionRunnable = (*Runner)(nil)
)

// NewRunner returns a Runner for scanner and registers its gauges on
// opts.Registry. Add it to the manager with mgr.Add.
func NewRunner(scanner *Scanner, opts RunnerOptions) (*Runner, error) {
	if scanner == nil {
		return nil, errors.New("creating the audit runner: no scanner")
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.EventInterval <= 0 {
		opts.EventInterval = opts.Interval
	}
	if opts.EventBudget <= 0 {
		opts.EventBudget = DefaultEventBudget
	}
	m, err := newMetrics(opts.Registry)
	if err != nil {
		return nil, err
	}
	fixReg := opts.Registry
	if opts.Fixer == nil {
		fixReg = nil
	}
	fixes, err := newFixesCounter(fixReg)
	if err != nil {
		return nil, err
	}
	return &Runner{
		scanner: scanner,
		opts:    opts,
		metrics: m,
		fixes:   fixes,
		events:  newEventLimiter(opts.Recorder, opts.EventInterval, opts.EventBudget),
		clock:   clock.RealClock{},
	}, nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: one
// replica audits.
func (r *Runner) NeedLeaderElection() bool { return true }

// Start implements manager.Runnable: it scans when the next scan is due
// (see nextStart) and then every Interval until ctx ends. A failed scan is
// logged and retried at the next tick; it never stops the manager, and it
// is not recorded in the Schedule, so that a new leader redoes it at once.
//
// It logs to the logger of ctx, else to controller-runtime's (ctrl.SetLogger):
// the manager starts its runnables with its BaseContext, which holds no
// logger unless the caller set one, and an audit that logs nothing hides
// its failures.
func (r *Runner) Start(ctx context.Context) error {
	ctx = logr.NewContext(ctx, crlog.FromContext(ctx))
	log := logr.FromContextOrDiscard(ctx).WithName("audit")
	for {
		if !r.sleepUntil(ctx, r.next(ctx)) {
			return nil
		}
		started := r.clock.Now()
		r.lastStart = started
		if err := r.scanOrRecover(ctx, started); err != nil {
			if ctx.Err() == nil {
				log.Error(err, "audit scan failed")
			}
			continue
		}
		r.record(ctx, started)
	}
}

// scanOrRecover is runOnce of a scan that started at started, with a
// panic (a bug of apply-hygiene's, outside one object's analysis, which
// recovers its own) turned into the scan's error: the audit runs in the
// webhook server, which the panic would end.
func (r *Runner) scanOrRecover(ctx context.Context, started time.Time) (err error) {
	defer func() {
		if p := recover(); p != nil {
			logr.FromContextOrDiscard(ctx).WithName("audit").Error(fmt.Errorf("%v", p), "the audit scan panicked", "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v [recovered]", p)
		}
	}()
	_, err = r.runOnce(ctx, started)
	return err
}

// next returns when the next scan is due. When the Schedule cannot be
// read, the scan runs on this Runner's own clock: the Schedule only saves
// a repeated scan after a hand-over, and an audit that stopped because of
// its bookkeeping would hide drift, which is worse than one scan too many.
func (r *Runner) next(ctx context.Context) time.Time {
	var recorded time.Time
	if r.opts.Schedule != nil {
		last, err := r.opts.Schedule.LastRun(ctx)
		if err != nil && ctx.Err() == nil {
			logScheduleError(ctx, err, "reading the audit schedule failed; scanning on this replica's own schedule")
		}
		recorded = last
	}
	return nextStart(r.clock.Now(), recorded, r.lastStart, r.opts.Interval)
}

// sleepUntil waits until at and reports whether ctx is still live.
func (r *Runner) sleepUntil(ctx context.Context, at time.Time) bool {
	if wait := at.Sub(r.clock.Now()); wait > 0 {
		timer := r.clock.NewTimer(wait)
		defer timer.Stop()
		select {
		case <-ctx.Done():
		case <-timer.C():
		}
	}
	return ctx.Err() == nil
}

// record records a successful scan that started at started in the
// Schedule. A failure is logged only: this Runner keeps its own pace
// (lastStart), and a new leader scans once more than needed.
func (r *Runner) record(ctx context.Context, started time.Time) {
	if r.opts.Schedule == nil {
		return
	}
	scan := ScanRecord{Started: started, Finished: r.clock.Now(), Interval: r.opts.Interval}
	if err := r.opts.Schedule.Record(ctx, scan); err != nil && ctx.Err() == nil {
		logScheduleError(ctx, err, "recording the audit scan in its schedule failed")
	}
}

// scheduleForbidden is what the audit logs, at info, when it may not read
// or write its Schedule's Lease: helm uninstall deletes the Role while the
// pods are in their shutdown delay, which is no failure to report with a
// stack trace (the leader election's own lines say the same: see
// cmd/apply-hygiene's log filter).
const scheduleForbidden = "no access to the audit schedule's Lease (its Role is gone, as during helm uninstall, or lacks leases): scanning on this replica's own schedule"

// logScheduleError logs err of the Schedule as msg, or, when the API
// server forbade the call, as scheduleForbidden at info.
func logScheduleError(ctx context.Context, err error, msg string) {
	log := logr.FromContextOrDiscard(ctx).WithName("audit")
	if apierrors.IsForbidden(err) {
		log.Info(scheduleForbidden)
		return
	}
	log.Error(err, msg)
}

// RunOnce scans once, then writes the fixes (RunnerOptions.Fixer),
// updates the gauges, records the events and publishes the report.
func (r *Runner) RunOnce(ctx context.Context) (*Report, error) {
	return r.runOnce(ctx, r.clock.Now())
}

// runOnce is RunOnce of a scan that started at start.
func (r *Runner) runOnce(ctx context.Context, start time.Time) (*Report, error) {
	log := logr.FromContextOrDiscard(ctx).WithName("audit")
	report, err := r.scanner.Scan(ctx, r.opts.Target)
	if err != nil {
		return nil, err
	}
	for _, e := range report.Errors {
		log.Error(e.Err, "audit could not analyze an object", "kind", e.Object.Kind, "namespace", e.Object.Namespace, "name", e.Object.Name)
	}
	report = r.fix(ctx, report)
	finished := r.clock.Now()
	r.metrics.export(report, float64(finished.UnixNano())/1e9)
	sent := r.events.record(report, finished)
	// The times at full precision (a logger's own timestamp may be cut to
	// seconds): "started" is what the schedule Lease's acquireTime holds.
	log.Info("audit scan finished", "objects", report.Objects, "findings", len(report.Findings),
		"events", sent, "errors", len(report.Errors), "duration", finished.Sub(start).String(),
		"started", start.UTC().Format(time.RFC3339Nano), "finished", finished.UTC().Format(time.RFC3339Nano))
	r.publish(ctx, report, finished)
	return report, nil
}
