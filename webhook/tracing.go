package webhook

import (
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/apply-hygiene/apply-hygiene/internal/tracing"
)

// TracerName is the instrumentation scope of apply-hygiene's review spans.
const TracerName = "github.com/apply-hygiene/apply-hygiene/webhook"

// WithTracerProvider traces each review with tp (see Traced): a root span
// per AdmissionReview, continuing the W3C traceparent the API server sends,
// with child spans for decode, analysis, policy evaluation and repair.
// Default: none, tracing off, at no cost on the review path.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) {
		if tp != nil {
			o.tracer = tp.Tracer(TracerName)
		}
	}
}

// Traced serves next with one root span per request (see
// WithTracerProvider), named "apply-hygiene PATH": a child of the span of
// the request's W3C traceparent header when it has one (the API server's
// webhook call), else a new trace. Without a tracer it returns next. Wrap
// the outermost handler of an endpoint; the endpoint's decode span, under
// the root, covers reading the review.
func (r *Reviewer) Traced(path string, next http.Handler) http.Handler {
	tracer := r.opts.tracer
	if tracer == nil {
		return next
	}
	route := attribute.String("http.route", path)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx := propagation.TraceContext{}.Extract(req.Context(), propagation.HeaderCarrier(req.Header))
		ctx, root := tracer.Start(ctx, tracing.ServerSpanName(path), trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(route))
		defer root.End()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, req.WithContext(ctx))
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		root.SetAttributes(attribute.Int("http.response.status_code", status))
		if status >= http.StatusInternalServerError {
			root.SetStatus(codes.Error, http.StatusText(status))
		}
	})
}

// statusWriter remembers the status a handler writes.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(status int) {
	if s.status == 0 {
		s.status = status
	}
	s.ResponseWriter.WriteHeader(status)
}
