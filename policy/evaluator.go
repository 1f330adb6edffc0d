package policy

import "context"

// Evaluator decides about a policy input. *Engine is the one the drivers
// (the webhook's review core, the audit) are given; EvaluatorFunc adapts
// a function, for tests and for wrappers such as the webhook's timing of
// evaluations.
type Evaluator interface {
	Evaluate(ctx context.Context, in *Input) ([]Decision, error)
}

var (
	_ Evaluator = EvaluatorFunc(nil)
	_ Evaluator = (*Engine)(nil)
)

// EvaluatorFunc adapts a function to Evaluator, as http.HandlerFunc adapts
// one to http.Handler.
type EvaluatorFunc func(ctx context.Context, in *Input) ([]Decision, error)

// Evaluate calls f.
func (f EvaluatorFunc) Evaluate(ctx context.Context, in *Input) ([]Decision, error) {
	return f(ctx, in)
}
