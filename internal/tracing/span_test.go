package tracing

import (
	"context"
	"errors"
	"testing"

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
	ctx = StartDecode(ctx, nil)
	Received(ctx, req)
	for _, name := range []string{SpanAnalysis, SpanPolicy, SpanRepair} {
		_, span := Start(ctx, nil, name)
		span.End(err)
	}
	Decisions(ctx, string(policy.Imperative), decisions, func(d policy.Decision) (string, string) { return string(d.Rule), string(d.Action) })
	EndDecode(ctx)
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
