package webhook

import (
	"net/http"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// BenchmarkReviewTracing measures a review with tracing off (no tracer
// provider: the server's default) and on (every review sampled, its spans
// recorded and dropped, not exported), each through Traced as the server
// serves it. tracing=off equals BenchmarkReview before tracing existed, to
// the allocation (docs/performance.md).
func BenchmarkReviewTracing(b *testing.B) {
	engine, err := policy.New(b.Context())
	if err != nil {
		b.Fatalf("creating the policy engine: %v", err)
	}
	for _, name := range []string{"typical-edit", "typical-undo"} {
		body, _ := loadBenchCase(b, name, engine)
		cluster := loadBenchCluster(b, name)
		for _, tracing := range []string{"off", "on"} {
			var opts []Option
			if tracing == "on" {
				opts = append(opts, WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))))
			}
			r := NewReviewer(engine, cluster, opts...)
			handlers := map[string]http.Handler{
				"validate": r.Traced("/validate", r.ValidatingEndpoint()),
				"mutate":   r.Traced("/mutate", r.MutatingEndpoint()),
			}
			for _, path := range []string{"validate", "mutate"} {
				b.Run("case="+name+"/path="+path+"/tracing="+tracing, func(b *testing.B) { benchHandler(b, handlers[path], body) })
			}
		}
	}
}
