package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// oracleHTTPHandler is the HTTP handler as it was before the single decode,
// kept as the oracle of the differential tests: controller-runtime's
// admission.Webhook decodes every review (objects kept raw), and the
// handler, finding no objects decoded with the request, decodes the raw
// ones (internal/review's Review).
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
	return compareAnswers(serve(p.oracle, newRequest), serve(p.once, newRequest))
}

// compareAnswers returns an error unless want and got are byte-identical,
// but for the order of a patch's operations (see sameAnswer).
func compareAnswers(want, got httpAnswer) error {
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

// sameAnswerOrMalformed is sameAnswer for a body that no API server sends
// (a mutated review, a fuzzer's), where the answers may also differ in two
// ways. A body that controller-runtime refused (HTTP 400, code 400) and
// the single decoder refuses too (isDecodeRefusal) may differ in the
// message and in whether the answer repeats the review's kind
// (controller-runtime reads YAML and null as reviews without a request).
// A body with a top-level key that only encoding/json's case-insensitive
// match takes for kind or apiVersion ("Kind", "APIVERSION", "\u212aind")
// may differ in the kind and apiVersion the answer repeats: controller-
// runtime reads that key, the case-sensitive decoder ignores it.
func sameAnswerOrMalformed(p handlerPair, body []byte) error {
	return answersSameOrMalformed(serve(p.oracle, postJSON(body)), serve(p.once, postJSON(body)), body)
}

// answersSameOrMalformed is sameAnswerOrMalformed on the answers want
// (the oracle's) and got to body.
func answersSameOrMalformed(want, got httpAnswer, body []byte) error {
	err := compareAnswers(want, got)
	if err == nil {
		return nil
	}
	if foldedTypeKey(body) && compareAnswers(withoutKind(want), withoutKind(got)) == nil {
		return nil
	}
	w, errW := parseAnswer(want)
	g, errG := parseAnswer(got)
	refused := outcome{Status: http.StatusBadRequest, Code: http.StatusBadRequest}
	if errW == nil && errG == nil && w.outcome() == refused && g.outcome() == refused &&
		g.review.Kind == "" && isDecodeRefusal(g.review.Response.Result.Message) {
		return nil
	}
	return err
}

// decodeRefusals begin the messages of decode's errors.
var decodeRefusals = []string{errEmptyBody.Error(), errNotJSONObject.Error(),
	"the request body is not valid JSON: ", "the request body is not an AdmissionReview: "}

// isDecodeRefusal reports whether message is one of decode's errors.
func isDecodeRefusal(message string) bool {
	for _, prefix := range decodeRefusals {
		if strings.HasPrefix(message, prefix) {
			return true
		}
	}
	return false
}

// foldedTypeKey reports whether body, a JSON object, has a top-level key
// that encoding/json's case-insensitive match takes for "kind" or
// "apiVersion" but that is spelled otherwise.
func foldedTypeKey(body []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return false
	}
	for key := range top {
		for _, name := range []string{"kind", "apiVersion"} {
			if key != name && strings.EqualFold(key, name) {
				return true
			}
		}
	}
	return false
}

// withoutKind is a without the kind and apiVersion its review repeats.
func withoutKind(a httpAnswer) httpAnswer {
	var review admissionv1.AdmissionReview
	if json.Unmarshal([]byte(a.Body), &review) != nil {
		return a
	}
	review.TypeMeta = metav1.TypeMeta{}
	out, err := json.Marshal(review)
	if err != nil {
		return a
	}
	a.Body = string(out) + "\n"
	return a
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
