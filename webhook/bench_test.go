package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

var updateBench = flag.Bool("update-bench", false, "rewrite testdata/bench from testdata/reviews")

// wantClass is the classification each benchmark review must get, by the
// suffix of its name.
var wantClass = map[string]policy.Classification{
	"apply": policy.ClientSideApply,
	"edit":  policy.Imperative,
	"undo":  policy.RolloutUndo,
	"scale": policy.Scale,
}

// BenchmarkReview measures the whole review path in-process, as the
// server runs it: the endpoint decodes the AdmissionReview, the Reviewer
// classifies, merges and evaluates, the handler encodes the response. For
// each review of testdata/bench, path=floor only decodes the review and
// encodes an allowed response (the cost of any webhook), path=validate and
// path=mutate are the two webhooks. Compare with
//
//	benchstat -col /path bench.txt
//
// It reports p50-ns and p99-ns of the operations besides the mean.
func BenchmarkReview(b *testing.B) {
	engine, err := policy.New(b.Context())
	if err != nil {
		b.Fatalf("creating the policy engine: %v", err)
	}
	names := make([]string, 0, len(benchSources))
	for name := range benchSources {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		body, r := loadBenchCase(b, name, engine)
		handlers := map[string]http.Handler{
			"floor":    oracleHTTPHandler(admission.HandlerFunc(func(context.Context, admission.Request) admission.Response { return admission.Allowed("") })),
			"validate": r.ValidatingEndpoint(),
			"mutate":   r.MutatingEndpoint(),
		}
		for _, path := range []string{"floor", "validate", "mutate"} {
			b.Run("case="+name+"/path="+path, func(b *testing.B) { benchHandler(b, handlers[path], body) })
		}
	}
}

func benchHandler(b *testing.B, h http.Handler, body []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	var took []time.Duration
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/review", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(rec, req)
		took = append(took, time.Since(start))
		if rec.Code != http.StatusOK {
			b.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
		}
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
}

// loadBenchCase reads testdata/bench/<name>.json and its cluster, and
// checks that the Reviewer classifies it as its name says and answers it
// without error.
func loadBenchCase(b *testing.B, name string, engine *policy.Engine) ([]byte, *Reviewer) {
	b.Helper()
	body, err := os.ReadFile(benchPath(name, ".json"))
	if err != nil {
		b.Fatal(err)
	}
	r := NewReviewer(engine, loadBenchCluster(b, name))
	var ar admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &ar); err != nil {
		b.Fatalf("decoding %s: %v", name, err)
	}
	rv, err := r.core.Review(b.Context(), ar.Request, review.Validate)
	if err != nil || rv == nil {
		b.Fatalf("reviewing %s: %v, %v", name, rv, err)
	}
	want := wantClass[name[strings.LastIndex(name, "-")+1:]]
	if rv.Input.Classification != want {
		b.Fatalf("%s is classified %q, want %q", name, rv.Input.Classification, want)
	}
	return body, r
}

// loadBenchCluster reads testdata/bench/<name>.cluster.json.
func loadBenchCluster(b *testing.B, name string) *fakeCluster {
	b.Helper()
	raw, err := os.ReadFile(benchPath(name, ".cluster.json"))
	if err != nil {
		b.Fatal(err)
	}
	list := &unstructured.UnstructuredList{}
	if err := list.UnmarshalJSON(raw); err != nil {
		b.Fatalf("decoding the cluster of %s: %v", name, err)
	}
	cluster := &fakeCluster{}
	for i := range list.Items {
		cluster.objects = append(cluster.objects, &list.Items[i])
	}
	return cluster
}
