package webhook

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// oracleReview is controller-runtime's unversionedAdmissionReview: an
// AdmissionReview that its universal deserializer decodes as is.
type oracleReview struct {
	admissionv1.AdmissionReview
}

// DeepCopyObject implements runtime.Object.
func (o *oracleReview) DeepCopyObject() runtime.Object {
	c := *o
	return &c
}

// BenchmarkDecodeOnce measures the decoding of a review and its objects
// alone, in one binary: path=controller-runtime is the old path
// (controller-runtime's universal deserializer, then both objects decoded
// into unstructured.Unstructured), path=once is decode.
//
//	go test -run '^$' -bench DecodeOnce -benchmem ./webhook/
func BenchmarkDecodeOnce(b *testing.B) {
	scheme := runtime.NewScheme()
	utilruntime.Must(admissionv1.AddToScheme(scheme))
	codecs := serializer.NewCodecFactory(scheme)
	for _, name := range []string{"typical-edit", "typical-apply", "typical-undo", "large-edit"} {
		body := readFile(b, filepath.Join("testdata", "bench", name+".json"))
		b.Run("case="+name+"/path=controller-runtime", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				ar := oracleReview{}
				ar.Request = &admissionv1.AdmissionRequest{}
				ar.SetGroupVersionKind(admissionv1.SchemeGroupVersion.WithKind("AdmissionReview"))
				if _, _, err := codecs.UniversalDeserializer().Decode(body, nil, &ar); err != nil {
					b.Fatal(err)
				}
				var old, new unstructured.Unstructured
				if err := old.UnmarshalJSON(ar.Request.OldObject.Raw); err != nil {
					b.Fatal(err)
				}
				if err := new.UnmarshalJSON(ar.Request.Object.Raw); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("case="+name+"/path=once", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := decode(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeOnceInterleaved is an A/B of the whole review in one
// process: each iteration serves the review through the floor (a handler
// that only allows), the old way (oracleHTTPHandler) and with the single
// decode (the endpoints), one after the other, so that a busy machine
// slows all three alike. It reports the median of each (floor-p50-ns,
// old-p50-ns, once-p50-ns), the ratio once/old and both ratios to the
// floor.
//
//	go test -run '^$' -bench DecodeOnceInterleaved -benchtime 400x ./webhook/
func BenchmarkDecodeOnceInterleaved(b *testing.B) {
	engine, err := policy.New(b.Context())
	if err != nil {
		b.Fatalf("creating the policy engine: %v", err)
	}
	floor := oracleHTTPHandler(admission.HandlerFunc(func(context.Context, admission.Request) admission.Response { return admission.Allowed("") }))
	for _, name := range []string{"typical-edit", "typical-apply", "typical-undo", "large-edit"} {
		body, r := loadBenchCase(b, name, engine)
		for _, path := range []string{"validate", "mutate"} {
			h := map[string]admission.Handler{"validate": r.Validating(), "mutate": r.Mutating()}[path]
			servers := []http.Handler{floor, oracleHTTPHandler(h), map[string]http.Handler{"validate": r.ValidatingEndpoint(), "mutate": r.MutatingEndpoint()}[path]}
			b.Run("case="+name+"/path="+path, func(b *testing.B) {
				took := make([][]time.Duration, len(servers))
				for b.Loop() {
					for i, s := range servers {
						took[i] = append(took[i], timeServe(b, s, body))
					}
				}
				p50 := make([]float64, len(servers))
				for i := range took {
					slices.Sort(took[i])
					p50[i] = float64(took[i][len(took[i])/2].Nanoseconds())
				}
				b.ReportMetric(p50[0], "floor-p50-ns")
				b.ReportMetric(p50[1], "old-p50-ns")
				b.ReportMetric(p50[2], "once-p50-ns")
				b.ReportMetric(p50[2]/p50[1], "once/old")
				b.ReportMetric(p50[1]/p50[0], "old/floor")
				b.ReportMetric(p50[2]/p50[0], "once/floor")
			})
		}
	}
}

// timeServe serves body with h once and returns how long it took.
func timeServe(b *testing.B, h http.Handler, body []byte) time.Duration {
	req := httptest.NewRequest(http.MethodPost, "/review", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	start := time.Now()
	h.ServeHTTP(rec, req)
	took := time.Since(start)
	if rec.Code != http.StatusOK {
		b.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
	}
	return took
}
