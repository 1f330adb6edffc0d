package webhook

import (
	"bytes"
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
// into unstructured.Unstructured), path=once is decodeReview.
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
				if _, ok := decodeReview(body); !ok {
					b.Fatal("not decoded once")
				}
			}
		})
	}
}

// BenchmarkDecodeOnceInterleaved is an A/B of the whole review in one
// process: each iteration serves the review the old way
// (oracleHTTPHandler) and with the single decode (NewHTTPHandler), one
// after the other, so that a busy machine slows both alike. It reports the
// median of each (old-p50-ns, once-p50-ns) and their ratio (once/old).
//
//	go test -run '^$' -bench DecodeOnceInterleaved -benchtime 400x ./webhook/
func BenchmarkDecodeOnceInterleaved(b *testing.B) {
	engine, err := policy.New(b.Context())
	if err != nil {
		b.Fatalf("creating the policy engine: %v", err)
	}
	for _, name := range []string{"typical-edit", "typical-apply", "typical-undo", "large-edit"} {
		body, r := loadBenchCase(b, name, engine)
		for _, path := range []string{"validate", "mutate"} {
			h := map[string]admission.Handler{"validate": r.Validating(), "mutate": r.Mutating()}[path]
			old, once := oracleHTTPHandler(h), NewHTTPHandler(h)
			b.Run("case="+name+"/path="+path, func(b *testing.B) {
				var tookOld, tookOnce []time.Duration
				for b.Loop() {
					tookOld = append(tookOld, timeServe(b, old, body))
					tookOnce = append(tookOnce, timeServe(b, once, body))
				}
				slices.Sort(tookOld)
				slices.Sort(tookOnce)
				p50Old, p50Once := tookOld[len(tookOld)/2], tookOnce[len(tookOnce)/2]
				b.ReportMetric(float64(p50Old.Nanoseconds()), "old-p50-ns")
				b.ReportMetric(float64(p50Once.Nanoseconds()), "once-p50-ns")
				b.ReportMetric(float64(p50Once)/float64(p50Old), "once/old")
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
