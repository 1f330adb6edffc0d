package webhook

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Metrics are the admission metrics. Their labels carry rule IDs,
// classifications, outcomes and webhook names only, never a value of an
// object.
type Metrics struct {
	reviews    *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	decisions  *prometheus.CounterVec
	evaluation prometheus.Histogram
	errors     *prometheus.CounterVec
}

// NewMetrics creates the admission metrics and registers them on reg, plus
// the state of the policy set that status reports (nil: none).
func NewMetrics(reg prometheus.Registerer, status func() policy.Status) (*Metrics, error) {
	m := &Metrics{
		reviews: counterVec("apply_hygiene_reviews_total",
			"Admission reviews by webhook (mutate, validate), classification and outcome (allowed, warned, denied, patched, skipped, error).",
			"webhook", "classification", "outcome"),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apply_hygiene_review_duration_seconds",
			Help:    "Time to review one admission request, by webhook and classification.",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1},
		}, []string{"webhook", "classification"}),
		decisions: counterVec("apply_hygiene_decisions_total",
			"Policy decisions acted on, by webhook, rule and action (dryrun decisions only count here and in the log).",
			"webhook", "rule", "action"),
		evaluation: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "apply_hygiene_policy_evaluation_duration_seconds",
			Help:    "Time to evaluate the policies for one request.",
			Buckets: []float64{0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05},
		}),
		errors: counterVec("apply_hygiene_review_errors_total",
			"Reviews that failed, by webhook and reason (bad_request, timeout, overload, shadow_mismatch, panic, internal).",
			"webhook", "reason"),
	}
	collectors := []prometheus.Collector{m.reviews, m.duration, m.decisions, m.evaluation, m.errors}
	if status != nil {
		collectors = append(collectors, policyCollectors(status)...)
	}
	for _, c := range collectors {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering metrics: %w", err)
		}
	}
	return m, nil
}

// counterVec is the counter vector name, described by help, with labels.
func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func policyCollectors(status func() policy.Status) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "apply_hygiene_policy_set_version",
			Help: "Version of the policy set in force: 1 after start, one more per successful reload.",
		}, func() float64 { return float64(status().Version) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "apply_hygiene_policy_evaluations_skipped_total",
			Help: "Policy evaluations skipped because the policy set in force provably decides nothing on an input with no finding for its classification.",
		}, func() float64 { return float64(status().Skipped) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "apply_hygiene_policy_load_failed",
			Help: "1 when the last policy load failed (the previous set keeps serving), else 0.",
		}, func() float64 {
			if status().LastError != nil {
				return 1
			}
			return 0
		}),
	}
}

// observe records one review; m may be nil.
func (m *Metrics) observe(webhook string, class policy.Classification, outcome string, started time.Time, acted []policy.Decision) {
	if m == nil {
		return
	}
	c := string(class)
	if c == "" {
		c = "none"
	}
	m.reviews.WithLabelValues(webhook, c, outcome).Inc()
	m.duration.WithLabelValues(webhook, c).Observe(time.Since(started).Seconds())
	for _, d := range acted {
		m.decisions.WithLabelValues(webhook, string(d.Rule), string(d.Action)).Inc()
	}
}

func (m *Metrics) observeError(webhook string, err error) {
	if m == nil {
		return
	}
	m.errors.WithLabelValues(webhook, errorReason(err)).Inc()
}

// errorReason is the kind of a review's failure, the reason label of the
// errors metric: bad_request, timeout, overload, shadow_mismatch, panic or
// internal.
func errorReason(err error) string {
	switch {
	case isBadRequest(err):
		return "bad_request"
	case errors.Is(err, errTooSlow):
		return "timeout"
	case errors.Is(err, errOverload):
		return "overload"
	case errors.Is(err, merge.ErrShadowMismatch):
		return "shadow_mismatch"
	case errors.Is(err, errPanicked):
		return "panic"
	}
	return "internal"
}

func (m *Metrics) observeEvaluation(d time.Duration) {
	if m != nil {
		m.evaluation.Observe(d.Seconds())
	}
}
