package webhook

import (
	"bytes"
	"encoding/json"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// NewHTTPHandler serves h as an AdmissionReview v1 endpoint, on
// controller-runtime's admission.Webhook (decoding, panics recovered as
// 500s). The Reviewer's handlers (Validating, Mutating) are served with one
// decode of the review and its objects instead of controller-runtime's
// decode and a second one of each object, with the same answers, byte for
// byte (see onceWebhook). A review answered as malformed (code 400) also gets HTTP status
// 400, and a body over controller-runtime's 7 MiB limit HTTP 413, so that
// the API server counts it as a failed call and applies the webhook's
// failurePolicy, and other clients see the error as such. A review must
// end within most of the timeout the API server sends (see
// withAPIServerDeadline); one that does not is answered as the failure
// policy says.
func NewHTTPHandler(h admission.Handler) http.Handler {
	hook := (&admission.Webhook{Handler: h}).WithRecoverPanic(true)
	var serve http.Handler = hook
	if _, ok := h.(decodesOnce); ok {
		serve = &onceWebhook{hook: hook}
	}
	return buffered(serve)
}

// buffered serves with serve under the API server's deadline and writes
// its answer once its status is known (statusOf).
func buffered(serve http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, cancel := withAPIServerDeadline(r)
		defer cancel()
		rec := &bufferedResponse{header: http.Header{}}
		serve.ServeHTTP(rec, r)
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.WriteHeader(statusOf(rec))
		_, _ = w.Write(rec.body.Bytes())
	})
}

// bufferedResponse holds a response until its status is known.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header         { return b.header }
func (b *bufferedResponse) Write(p []byte) (int, error) { return b.body.Write(p) }
func (b *bufferedResponse) WriteHeader(status int)      { b.status = status }

func statusOf(b *bufferedResponse) int {
	if b.status != 0 && b.status != http.StatusOK {
		return b.status
	}
	// Only a refusal needs a look inside; most answers allow.
	if !bytes.Contains(b.body.Bytes(), []byte(`"allowed":false`)) {
		return http.StatusOK
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(b.body.Bytes(), &review); err == nil && review.Response != nil &&
		!review.Response.Allowed && review.Response.Result != nil && refused(review.Response.Result.Code) {
		return int(review.Response.Result.Code)
	}
	return http.StatusOK
}

// refused reports whether a review's result code means the request was not
// reviewed at all: malformed (400) or too large to read (413).
func refused(code int32) bool {
	return code == http.StatusBadRequest || code == http.StatusRequestEntityTooLarge
}
