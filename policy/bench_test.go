package policy

import (
	"context"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

// BenchmarkEvaluate evaluates a typical request: a client-side apply with
// one orphan, against the bundled rules.
func BenchmarkEvaluate(b *testing.B) {
	e := newEngine(b)
	in := loadInput(b, "client-side-apply")
	b.ReportAllocs()
	for b.Loop() {
		ds, err := e.Evaluate(b.Context(), in)
		if err != nil || len(ds) != 1 {
			b.Fatalf("Evaluate = %v, %v", ds, err)
		}
	}
}

// BenchmarkEvaluateParallel is BenchmarkEvaluate from many goroutines, as
// the webhook calls it.
func BenchmarkEvaluateParallel(b *testing.B) {
	e := newEngine(b)
	in := loadInput(b, "client-side-apply")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := e.Evaluate(b.Context(), in); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkEvaluateEmpty evaluates a clean apply, whose analysis is
// empty, with the shortcut of silent classifications and without it.
func BenchmarkEvaluateEmpty(b *testing.B) {
	for name, opts := range map[string][]Option{"shortcut": nil, "full": {WithFullEvaluation()}} {
		b.Run(name, func(b *testing.B) {
			e := newEngine(b, opts...)
			in := loadInput(b, "clean-apply")
			b.ReportAllocs()
			for b.Loop() {
				ds, err := e.Evaluate(b.Context(), in)
				if err != nil || len(ds) != 0 {
					b.Fatalf("Evaluate = %v, %v", ds, err)
				}
			}
		})
	}
}

// BenchmarkEvaluateAudit evaluates the audit's input of a stored object
// with one orphan, with the plain query and with the audit's, which also
// says which decisions the bundled rules made (Decision.Bundled): the
// cost of provenance.
func BenchmarkEvaluateAudit(b *testing.B) {
	e := newEngine(b)
	in := loadInput(b, "client-side-apply")
	in.Classification, in.Analysis.Operation = Audit, "live"
	value, err := inputValue(in)
	if err != nil {
		b.Fatal(err)
	}
	for name, eval := range map[string]func(context.Context, *policySet, ast.Value) ([]Decision, error){
		"plain": evaluateValue, "provenance": evaluateProvenance,
	} {
		b.Run(name, func(b *testing.B) {
			set := e.current.Load()
			b.ReportAllocs()
			for b.Loop() {
				ds, err := eval(b.Context(), set, value)
				if err != nil || len(ds) != 1 {
					b.Fatalf("evaluating = %v, %v", ds, err)
				}
			}
		})
	}
}
