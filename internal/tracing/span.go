package tracing

import (
	"context"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Names of the spans of a review; the root span is named by the HTTP
// server (ServerSpanName).
const (
	// SpanDecode reads and decodes the AdmissionReview.
	SpanDecode = "decode"
	// SpanAnalysis is the merge analysis of the write (and the rollout
	// undo's revisions).
	SpanAnalysis = "analysis"
	// SpanPolicy is the policy evaluation.
	SpanPolicy = "policy"
	// SpanRepair carries out the mutating pass's repair and prune
	// decisions.
	SpanRepair = "repair"
)

// ServerSpanName is the name of the root span of a review served at path
// ("/mutate", "/validate").
func ServerSpanName(path string) string { return "apply-hygiene " + path }

// Span is a started span, or none: the zero Span does nothing.
type Span struct {
	span trace.Span
}

// Start starts a span named name under ctx's span with tracer. A nil
// tracer (tracing off) starts none: it returns ctx and the zero Span,
// without allocating.
func Start(ctx context.Context, tracer trace.Tracer, name string) (context.Context, Span) {
	if tracer == nil {
		return ctx, Span{}
	}
	ctx, s := tracer.Start(ctx, name)
	return ctx, Span{span: s}
}

// End ends the span; a non-nil err marks it failed. The error's text is
// not recorded: it may quote a field's value.
func (s Span) End(err error) {
	if s.span == nil {
		return
	}
	if err != nil {
		s.span.SetStatus(codes.Error, "failed")
	}
	s.span.End()
}

// Failed marks ctx's span (a review's root span) failed with description,
// which names the failure. A review is answered with HTTP 200 whatever
// happens, its failure in the AdmissionResponse (a status code of 500, or
// an allowance with a warning under failure policy Ignore), so the root
// span's HTTP status cannot tell. The description must never be an
// error's text that may quote a field's value.
func Failed(ctx context.Context, description string) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetStatus(codes.Error, description)
}
