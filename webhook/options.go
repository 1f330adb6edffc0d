package webhook

import (
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// Option configures a Reviewer.
type Option func(*options)

type options struct {
	analyzer   *merge.Analyzer
	maxWarning int
	failOpen   bool
	metrics    *Metrics
	budget     *memoryBudget

	recorder      EventRecorder
	eventInterval time.Duration

	controllerUsers []string

	// tracer is WithTracerProvider's; nil: tracing off.
	tracer trace.Tracer
}

func defaultOptions() options {
	return options{
		// kubectl prints each warning on its own line; the API server
		// rejects the whole response when warnings are too long.
		maxWarning: 1024,
		failOpen:   true,
		budget:     newMemoryBudget(DefaultMemoryBudget()),

		eventInterval: DefaultEventInterval,
	}
}

// WithAnalyzer sets the merge analyzer. Default: merge.NewAnalyzer().
func WithAnalyzer(a *merge.Analyzer) Option {
	return func(o *options) { o.analyzer = a }
}

// WithControllerUsers adds user names whose writes are controllers' and
// never reviewed, besides review.ControllerUsers (the chart's
// controllerUsers). Default: none.
func WithControllerUsers(users ...string) Option {
	return func(o *options) { o.controllerUsers = append(o.controllerUsers, users...) }
}

// WithFailOpen says what an internal error (the API unreachable, a policy
// that fails to evaluate) answers: allowed with a warning when true, a
// rejection when false. Set it to match the webhook configurations'
// failurePolicy (Ignore: true, Fail: false): the API server applies
// failurePolicy only to calls that fail, not to answers. Default: true.
func WithFailOpen(failOpen bool) Option {
	return func(o *options) { o.failOpen = failOpen }
}

// WithMetrics records admission metrics (see NewMetrics). Default: none.
func WithMetrics(m *Metrics) Option {
	return func(o *options) { o.metrics = m }
}

// WithMemoryBudget bounds the memory the reviews in flight through the
// endpoints (Handlers) may hold to n bytes; a review beyond it is answered at once
// as the failure policy says. 0 or less turns the budget off. Default:
// DefaultMemoryBudget(), half of GOMEMLIMIT, or 128 MiB without one.
func WithMemoryBudget(n int64) Option {
	return func(o *options) { o.budget = newMemoryBudget(n) }
}

// WithEventRecorder records a Warning event on the object for each rule
// that denies or warns about a write in the validating pass (reason: the
// rule ID in CamelCase, note: the decision's message cut to 1024 bytes),
// never for a dry-run request, at most one per object and rule per
// WithEventInterval. Events are sent off the review's path and dropped
// rather than waited for. Default: none.
func WithEventRecorder(r EventRecorder) Option {
	return func(o *options) { o.recorder = r }
}

// WithEventInterval sets how often at most one object gets an event for
// one rule. Default: DefaultEventInterval.
func WithEventInterval(d time.Duration) Option {
	return func(o *options) { o.eventInterval = d }
}
