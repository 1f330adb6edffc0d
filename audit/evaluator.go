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

var (
	_ Evaluator = policy.EvaluatorFunc(nil)
	_ Evaluator = (*policy.Engine)(nil)
)
