package audit

import (
	"context"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Evaluator decides about a policy input; *policy.Engine is one, the same
// engine admission asks.
type Evaluator interface {
	Evaluate(ctx context.Context, in *policy.Input) ([]policy.Decision, error)
}

// EvaluatorFunc adapts a function to Evaluator.
type EvaluatorFunc func(ctx context.Context, in *policy.Input) ([]policy.Decision, error)

// Evaluate implements Evaluator.
func (f EvaluatorFunc) Evaluate(ctx context.Context, in *policy.Input) ([]policy.Decision, error) {
	return f(ctx, in)
}

var (
	_ Evaluator = EvaluatorFunc(nil)
	_ Evaluator = (*policy.Engine)(nil)
)
