package tracing

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	admissionv1 "k8s.io/api/admission/v1"
)

type decodeKey struct{}

// StartDecode starts the decode span under ctx's span and returns ctx (its
// span still the parent of what follows) carrying it, for Received to end
// once the review is decoded. A nil tracer starts none.
func StartDecode(ctx context.Context, tracer trace.Tracer) context.Context {
	if tracer == nil {
		return ctx
	}
	_, span := tracer.Start(ctx, SpanDecode)
	return context.WithValue(ctx, decodeKey{}, span)
}

// EndDecode ends the decode span StartDecode put in ctx, if it has not
// ended yet: the review was not decoded (an error, an overload).
func EndDecode(ctx context.Context) {
	if span, ok := ctx.Value(decodeKey{}).(trace.Span); ok {
		span.End()
	}
}

// Received marks req decoded: it ends the decode span (StartDecode) and
// sets req's identity on ctx's span (Request). A handler calls it first.
func Received(ctx context.Context, req *admissionv1.AdmissionRequest) {
	if span, ok := ctx.Value(decodeKey{}).(trace.Span); ok {
		span.End()
		Request(ctx, req)
	}
}
