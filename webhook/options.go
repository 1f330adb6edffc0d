package webhook

import (
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
}

func defaultOptions() options {
	return options{
		// kubectl prints each warning on its own line; the API server
		// rejects the whole response when warnings are too long.
		maxWarning: 1024,
		failOpen:   true,
		budget:     newMemoryBudget(DefaultMemoryBudget()),
	}
}

// WithAnalyzer sets the merge analyzer. Default: merge.NewAnalyzer().
func WithAnalyzer(a *merge.Analyzer) Option {
	return func(o *options) { o.analyzer = a }
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

// WithMemoryBudget bounds the memory the reviews in flight through
// WithinBudget may hold to n bytes; a review beyond it is answered at once
// as the failure policy says. 0 or less turns the budget off. Default:
// DefaultMemoryBudget(), half of GOMEMLIMIT, or 128 MiB without one.
func WithMemoryBudget(n int64) Option {
	return func(o *options) { o.budget = newMemoryBudget(n) }
}
