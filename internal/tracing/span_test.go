package tracing

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// With tracing off (a nil tracer) every step of a review's tracing
// allocates nothing.
func TestTracingOffAllocatesNothing(t *testing.T) {
	ctx := t.Context()
	req := &admissionv1.AdmissionRequest{UID: "u", Operation: admissionv1.Update}
	decisions := []policy.Decision{{Rule: "imperative-edit", Action: policy.ActionDeny}}
	failed := errors.New("failed")
	allocs := testing.AllocsPerRun(100, func() { offReview(ctx, req, decisions, failed) })
	if allocs != 0 {
		t.Errorf("tracing off allocates %v times a review, want 0", allocs)
	}
}

// offReview is every call a review makes to this package, tracing off.
func offReview(ctx context.Context, req *admissionv1.AdmissionRequest, decisions []policy.Decision, err error) {
	decode := StartDecode(ctx, nil)
	decode.Received(ctx, req)
	for _, name := range []string{SpanAnalysis, SpanPolicy, SpanRepair} {
		_, span := Start(ctx, nil, name)
		span.End(err)
	}
	Decisions(ctx, string(policy.Imperative), decisions, func(d policy.Decision) (string, string) { return string(d.Rule), string(d.Action) })
	if err != nil {
		Failed(ctx, "apply-hygiene could not review this request")
	}
	decode.End()
}

// Failed marks the span of its context failed, with the description it
// is given, and the spans under it are left as they are.
func TestFailedMarksTheSpanOfItsContext(t *testing.T) {
	exporter := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	tracer := tp.Tracer("test")
	ctx, root := tracer.Start(t.Context(), ServerSpanName("/validate"))
	_, child := Start(ctx, tracer, SpanPolicy)
	child.End(nil)
	Failed(ctx, "apply-hygiene could not review this request (internal error)")
	root.End()

	got := map[string]sdktrace.Status{}
	for _, s := range exporter.GetSpans() {
		got[s.Name] = s.Status
	}
	want := map[string]sdktrace.Status{
		"apply-hygiene /validate": {Code: codes.Error, Description: "apply-hygiene could not review this request (internal error)"},
		SpanPolicy:                {Code: codes.Unset},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("span statuses (-want +got):\n%s", diff)
	}
}

// BenchmarkTracingOff measures what a review pays for tracing when it is
// off: nothing.
func BenchmarkTracingOff(b *testing.B) {
	ctx := b.Context()
	req := &admissionv1.AdmissionRequest{UID: "u", Operation: admissionv1.Update}
	decisions := []policy.Decision{{Rule: "imperative-edit", Action: policy.ActionDeny}}
	b.ReportAllocs()
	for b.Loop() {
		offReview(ctx, req, decisions, nil)
	}
}
