package memory

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/policy"
	"github.com/apply-hygiene/apply-hygiene/webhook"
)

// reviewCostFactor is webhook's reserve per byte of body (the unexported
// constant of the same name): the measured peak must stay under it.
const reviewCostFactor = 10

// namespaceOnly is a cluster with only the review's namespace, unlabelled:
// all an edit's review reads.
type namespaceOnly struct{}

func (namespaceOnly) Object(context.Context, schema.GroupVersionResource, string, string) (*unstructured.Unstructured, error) {
	return nil, nil
}

func (namespaceOnly) Revisions(context.Context, *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return nil, nil
}

func (namespaceOnly) NamespaceLabels(context.Context, string) (map[string]string, error) {
	return map[string]string{}, nil
}

var _ webhook.Cluster = namespaceOnly{}

// TestReviewCostFactor measures the memory one review of the large review
// holds at its peak, per byte of its body, for both webhooks: with the
// collector running all the time (GOGC=5), the heap sampled during the
// review is its live memory. The peak must stay under the factor the
// memory budget reserves.
func TestReviewCostFactor(t *testing.T) {
	engine, err := policy.New(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	reviewer := webhook.NewReviewer(engine, namespaceOnly{})
	body := largeReview(t)
	for name, h := range map[string]http.Handler{
		"validate": reviewer.ValidatingEndpoint(),
		"mutate":   reviewer.MutatingEndpoint(),
	} {
		t.Run(name, func(t *testing.T) {
			started := time.Now()
			serve(t, h, body) // warm up: the policy engine's and the analyzer's caches
			t.Logf("one review at the default GOGC: %s", time.Since(started).Round(time.Millisecond))
			peak, allocated := measure(t, h, body)
			factor := float64(peak) / float64(len(body))
			t.Logf("body %.1f MiB: peak live heap +%.1f MiB (%.1f× the body), allocated %.1f MiB (%.1f×)",
				float64(len(body))/(1<<20), float64(peak)/(1<<20), factor, float64(allocated)/(1<<20), float64(allocated)/float64(len(body)))
			if factor > reviewCostFactor {
				t.Errorf("a review holds %.1f× its body at its peak, over the %d× the memory budget reserves", factor, reviewCostFactor)
			}
		})
	}
}

// measure serves body once and returns the peak of the heap above what it
// was before, and the bytes allocated.
func measure(t *testing.T, h http.Handler, body []byte) (peak, allocated uint64) {
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var max atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > max.Load() {
				max.Store(ms.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	serve(t, h, body)
	close(done)
	<-sampled
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return max.Load() - before.HeapAlloc, after.TotalAlloc - before.TotalAlloc
}

// serve sends body to h and checks that it was reviewed, not answered as
// an internal error.
func serve(t *testing.T, h http.Handler, body []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/review", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "could not review") {
		t.Fatalf("answer %d: %.500s", rec.Code, rec.Body.String())
	}
}
