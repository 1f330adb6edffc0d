package review

import "go.opentelemetry.io/otel/trace"

// Option configures a Reviewer.
type Option func(*Reviewer)

// WithControllerUsers adds user names whose writes are controllers' and
// never reviewed, besides ControllerUsers: the chart's controllerUsers,
// which its not-a-controller match condition spares too. Default: none.
func WithControllerUsers(users ...string) Option {
	return func(r *Reviewer) {
		if r.controllers == nil {
			r.controllers = map[string]bool{}
		}
		for _, u := range users {
			r.controllers[u] = true
		}
	}
}

// WithTracer records the spans of a review's analysis, policy evaluation
// and repair (see internal/tracing) with tracer, and its classification and
// decisions on the span of the review's context. Default: nil, none.
func WithTracer(tracer trace.Tracer) Option {
	return func(r *Reviewer) { r.tracer = tracer }
}
