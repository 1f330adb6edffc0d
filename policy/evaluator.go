package policy

import "context"

// EvaluatorFunc adapts a function to the Evaluate method that *Engine
// has, as http.HandlerFunc adapts one to http.Handler. The drivers (the
// webhook's review core, the audit) each declare the small Evaluator
// interface they consume; this one adapter serves all of them, for tests
// and for wrappers such as the webhook's timing of evaluations.
type EvaluatorFunc func(ctx context.Context, in *Input) ([]Decision, error)

// Evaluate calls f.
func (f EvaluatorFunc) Evaluate(ctx context.Context, in *Input) ([]Decision, error) {
	return f(ctx, in)
}
