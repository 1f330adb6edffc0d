package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// oracleHTTPHandler is the HTTP handler as it was before the single decode,
// kept as the oracle of the differential tests: controller-runtime's
// admission.Webhook decodes every review (objects kept raw), and the
// handler, finding no objects decoded with the request, decodes them again
// (internal/review's decodePair).
func oracleHTTPHandler(h admission.Handler) http.Handler {
	return buffered((&admission.Webhook{Handler: h}).WithRecoverPanic(true))
}

// handlerPair is one webhook served the old way (the oracle) and the new
// way (Reviewer.Endpoint).
type handlerPair struct {
	oracle, once http.Handler
}

// reviewerPairs returns the validating and the mutating webhook of r, each
// as a handlerPair.
func reviewerPairs(r *Reviewer) map[string]handlerPair {
	return map[string]handlerPair{
		"validating": {oracle: oracleHTTPHandler(r.Validating()), once: r.ValidatingEndpoint()},
		"mutating":   {oracle: oracleHTTPHandler(r.Mutating()), once: r.MutatingEndpoint()},
	}
}

// httpAnswer is what a client of a webhook sees of one call.
type httpAnswer struct {
	Status      int
	ContentType string
	Body        string
}

// serve calls h with the request newRequest makes (a fresh one per call:
// a body is read once).
func serve(h http.Handler, newRequest func() *http.Request) httpAnswer {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, newRequest())
	return httpAnswer{Status: rec.Code, ContentType: rec.Header().Get("Content-Type"), Body: rec.Body.String()}
}

// sameAnswer serves newRequest with both handlers of p and returns an error
// unless the answers are byte-identical. The one exception is the order of
// a JSON patch's operations, which gomodules.xyz/jsonpatch takes from Go's
// map iteration, so that two calls of the oracle itself may differ there:
// patches are compared as sets of operations.
func sameAnswer(p handlerPair, newRequest func() *http.Request) error {
	want, got := serve(p.oracle, newRequest), serve(p.once, newRequest)
	if want == got {
		return nil
	}
	if want.Status == got.Status && want.ContentType == got.ContentType {
		w, errW := canonicalPatch(want.Body)
		g, errG := canonicalPatch(got.Body)
		if errW == nil && errG == nil && w == g {
			return nil
		}
	}
	return fmt.Errorf("answers differ:\noracle:     %d %q %s\ndecode once: %d %q %s",
		want.Status, want.ContentType, want.Body, got.Status, got.ContentType, got.Body)
}

// canonicalPatch returns body with its response's JSON patch operations
// sorted; an error when body has no patch.
func canonicalPatch(body string) (string, error) {
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal([]byte(body), &review); err != nil {
		return "", fmt.Errorf("decoding the httpAnswer: %w", err)
	}
	if review.Response == nil || len(review.Response.Patch) == 0 {
		return "", fmt.Errorf("the httpAnswer has no patch")
	}
	var ops []json.RawMessage
	if err := json.Unmarshal(review.Response.Patch, &ops); err != nil {
		return "", fmt.Errorf("decoding the patch: %w", err)
	}
	sort.Slice(ops, func(i, j int) bool { return bytes.Compare(ops[i], ops[j]) < 0 })
	patch, err := json.Marshal(ops)
	if err != nil {
		return "", fmt.Errorf("encoding the patch: %w", err)
	}
	review.Response.Patch = patch
	out, err := json.Marshal(review)
	if err != nil {
		return "", fmt.Errorf("encoding the httpAnswer: %w", err)
	}
	return string(out), nil
}

// postJSON returns a request maker for body posted as the API server posts
// a review.
func postJSON(body []byte) func() *http.Request {
	return func() *http.Request {
		req := httptest.NewRequest(http.MethodPost, "/review", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		return req
	}
}

// buffered serves with serve under the API server's deadline and writes
// its answer once its status is known (statusOf): the transport as it was
// before Endpoint, kept for the oracle.
func buffered(serve http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, _, cancel := withAPIServerDeadline(r)
		defer cancel()
		if ctx != r.Context() {
			r = r.WithContext(ctx)
		}
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

// statusOf is the status of a buffered answer: HTTP 400 or 413 for a
// review refused so, else its own or 200.
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
