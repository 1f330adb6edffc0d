package webhook

import (
	"context"
	"errors"
	"time"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Evaluator decides what to do about a write: the policy engine. It is
// the review core's interface; *policy.Engine and policy.EvaluatorFunc
// implement it.
type Evaluator = review.Evaluator

// Reviewer serves admission requests: the HTTP-facing wrapper of the
// review core (internal/review), which decodes, classifies, analyzes and
// evaluates. Reviewer adds what belongs to admission: the API server's
// deadline, the responses, the warnings' length, metrics and logs. It is
// safe for concurrent use.
type Reviewer struct {
	opts   options
	core   *review.Reviewer
	events *eventRecorder
}

// NewReviewer returns a Reviewer that asks evaluator and reads from
// cluster.
func NewReviewer(evaluator Evaluator, cluster Cluster, opts ...Option) *Reviewer {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	timed := policy.EvaluatorFunc(func(ctx context.Context, in *policy.Input) ([]policy.Decision, error) {
		started := time.Now()
		decisions, err := evaluator.Evaluate(ctx, in)
		o.metrics.observeEvaluation(time.Since(started))
		return decisions, err
	})
	return &Reviewer{opts: o, core: review.NewReviewer(o.analyzer, timed, cluster, review.WithControllerUsers(o.controllerUsers...), review.WithTracer(o.tracer)), events: newEventRecorder(o.recorder, o.eventInterval)}
}

// isBadRequest reports whether err means the request itself is malformed.
func isBadRequest(err error) bool { return errors.Is(err, review.ErrBadRequest) }
