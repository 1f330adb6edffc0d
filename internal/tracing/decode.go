package tracing

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	admissionv1 "k8s.io/api/admission/v1"
)

// Decode is the span of reading and decoding one review, held by the
// review's caller: StartDecode starts it, Received or End ends it. A nil
// *Decode (tracing off) does nothing.
type Decode struct{ span trace.Span }

// StartDecode starts the decode span under ctx's span; with a nil tracer
// it starts none and returns nil.
func StartDecode(ctx context.Context, tracer trace.Tracer) *Decode {
	if tracer == nil {
		return nil
	}
	_, span := tracer.Start(ctx, SpanDecode)
	return &Decode{span: span}
}

// End ends the decode span if it has not ended yet: the review was not
// decoded (an error, an overload).
func (d *Decode) End() {
	if d != nil {
		d.span.End()
	}
}

// Received marks req decoded: it ends the decode span and sets req's
// identity on ctx's span (Request). A handler calls it first.
func (d *Decode) Received(ctx context.Context, req *admissionv1.AdmissionRequest) {
	if d != nil {
		d.span.End()
		Request(ctx, req)
	}
}
