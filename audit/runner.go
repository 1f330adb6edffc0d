package audit

import (
	"context"
	"errors"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// RunnerOptions configure a Runner.
type RunnerOptions struct {
	// Interval is the time between the starts of two scans; the first
	// starts when the Runner does. Default: 1h.
	Interval time.Duration
	// Target is what each scan lists. Default: every namespace,
	// DefaultResources.
	Target Target
	// Registry receives the gauges apply_hygiene_audit_findings{rule,
	// namespace}, apply_hygiene_audit_objects and
	// apply_hygiene_audit_last_success_timestamp_seconds. Default: nil, no
	// metrics.
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
	events  *eventLimiter
	now     func() time.Time
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
	return &Runner{
		scanner: scanner,
		opts:    opts,
		metrics: m,
		events:  newEventLimiter(opts.Recorder, opts.EventInterval, opts.EventBudget),
		now:     time.Now,
	}, nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: one
// replica audits.
func (r *Runner) NeedLeaderElection() bool { return true }

// Start implements manager.Runnable: it scans now and then every
// Interval until ctx ends. A failed scan is logged and retried at the next
// tick; it never stops the manager.
func (r *Runner) Start(ctx context.Context) error {
	log := logr.FromContextOrDiscard(ctx).WithName("audit")
	ticker := time.NewTicker(r.opts.Interval)
	defer ticker.Stop()
	for {
		if _, err := r.RunOnce(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "audit scan failed")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// RunOnce scans once, then updates the gauges and records the events.
func (r *Runner) RunOnce(ctx context.Context) (*Report, error) {
	log := logr.FromContextOrDiscard(ctx).WithName("audit")
	start := r.now()
	report, err := r.scanner.Scan(ctx, r.opts.Target)
	if err != nil {
		return nil, err
	}
	for _, e := range report.Errors {
		log.Error(e.Err, "audit could not analyze an object", "kind", e.Object.Kind, "namespace", e.Object.Namespace, "name", e.Object.Name)
	}
	finished := r.now()
	r.metrics.export(report, float64(finished.UnixNano())/1e9)
	sent := r.events.record(report, finished)
	log.Info("audit scan finished", "objects", report.Objects, "findings", len(report.Findings),
		"events", sent, "errors", len(report.Errors), "duration", finished.Sub(start).String())
	return report, nil
}
