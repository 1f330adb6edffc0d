package tracing_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/apply-hygiene/apply-hygiene/internal/tracing"
)

// A review's step is a span under the review's span with a tracer, and
// nothing without one.
func ExampleStart() {
	spans := tracetest.NewSpanRecorder()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)).Tracer("example")

	ctx, review := tracer.Start(context.Background(), "apply-hygiene /validate")
	_, analysis := tracing.Start(ctx, tracer, tracing.SpanAnalysis)
	analysis.End(nil)
	review.End()

	_, off := tracing.Start(ctx, nil, tracing.SpanPolicy)
	off.End(nil)

	for _, s := range spans.Ended() {
		fmt.Println(s.Name(), s.Parent().SpanID() == review.SpanContext().SpanID())
	}
	// Output:
	// analysis true
	// apply-hygiene /validate false
}
