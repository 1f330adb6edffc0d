package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime/debug"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
)

// reviewCostFactor is how many bytes of memory a review may hold at its
// peak per byte of its request body. Measured by TestReviewCostFactor in
// test/memory on a 2.9 MiB review (a 1.5 MiB Deployment and its 1.5 MiB old
// version, the largest the API server sends), with the collector running
// all the time so that the heap sampled during the review is what it
// holds: the validating review peaks at 9.8–10.1 times its body (it
// allocates 36–37 times its body in all, most of it garbage collected
// during the review), the mutating one at 3.1–3.7 times. The body, the
// decoded review, both objects as maps, their typed values and field sets
// and the policy input live at once. 12 is the validating peak with 20 %
// to spare, for objects that decode less compactly (many short strings).
// Since merge prunes what did not change, the validating peak is 6.8 times
// (docs/performance.md, "Memory under adversarial load").
const reviewCostFactor = 12

// maxBody is controller-runtime's limit on a request body (larger ones are
// answered 413 unread): the cost of a review of unknown length.
const maxBody = 7 << 20

// DefaultMemoryBudget is the budget of WithMemoryBudget when none is set:
// half of the Go memory limit (GOMEMLIMIT, which the chart sets from the
// container's memory limit) when there is one, else 128 MiB, half of the
// chart's default limit of 256 MiB. The other half is for the rest of the
// server (the policy engine, caches, TLS, the runtime) and for the
// collector's headroom.
func DefaultMemoryBudget() int64 {
	if limit := debug.SetMemoryLimit(-1); limit != math.MaxInt64 {
		return limit / 2
	}
	return 128 << 20
}

// errOverload marks a review that was not made because the reviews in
// flight already hold the memory budget.
var errOverload = errors.New("over its memory budget")

// memoryBudget bounds the memory the reviews in flight may hold. A review
// reserves its estimated cost before its body is read and gives it back
// when it is answered; one that does not fit is answered at once, never
// queued.
type memoryBudget struct {
	size int64
	sem  *semaphore.Weighted
}

// newMemoryBudget returns a budget of size bytes; nil (no budget) for 0 or
// less.
func newMemoryBudget(size int64) *memoryBudget {
	if size <= 0 {
		return nil
	}
	return &memoryBudget{size: size, sem: semaphore.NewWeighted(size)}
}

// cost estimates the memory of a review whose body is contentLength bytes
// (-1: unknown), at most the whole budget so that any review can run
// alone.
func (b *memoryBudget) cost(contentLength int64) int64 {
	if contentLength < 0 || contentLength > maxBody {
		contentLength = maxBody
	}
	return min(contentLength*reviewCostFactor, b.size)
}

// sized reads the body of a request sent without a Content-Length
// (chunked; the API server always sends one) up to maxBody and one byte,
// so that its cost is its size rather than that of the largest body. The
// body read is put back for the handler.
func sized(req *http.Request) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(io.LimitReader(req.Body, maxBody+1))
	req.Body = io.NopCloser(io.MultiReader(&buf, errReader{err}))
	if err == nil {
		req.ContentLength = int64(buf.Len())
	}
}

// errReader returns err, or io.EOF when it is nil.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}

// answerOverload answers req, unreviewed, as the failure policy says.
// Only the review's kind and uid are decoded, from the start of the body
// where the API server writes them; the rest is read and dropped without
// being held.
func (r *Reviewer) answerOverload(w http.ResponseWriter, req *http.Request, webhook string, cause error) {
	body := io.LimitReader(req.Body, maxBody)
	head, uid, err := reviewHead(body)
	_, _ = io.Copy(io.Discard, body) // keeps the connection for the next call
	var resp admission.Response
	if err != nil {
		resp = r.errored(req.Context(), webhook, fmt.Errorf("%w: reading the review: %w", review.ErrBadRequest, err))
	} else {
		resp = r.errored(req.Context(), webhook, cause)
		resp.UID = uid
	}
	if head.APIVersion == "" {
		head = metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"}
	}
	status := http.StatusOK
	if resp.Result != nil && refused(resp.Result.Code) {
		status = int(resp.Result.Code)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(admissionv1.AdmissionReview{TypeMeta: head, Response: &resp.AdmissionResponse})
}

// reviewHead reads an AdmissionReview's kind, apiVersion and request.uid
// token by token, and stops at the uid: the API server writes them first,
// so the objects after them are never decoded. A value before the uid that
// is not one of them is decoded to be skipped.
func reviewHead(body io.Reader) (metav1.TypeMeta, types.UID, error) {
	var head metav1.TypeMeta
	dec := json.NewDecoder(body)
	if err := openObject(dec); err != nil {
		return head, "", err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return head, "", err
		}
		switch key {
		case "kind":
			err = dec.Decode(&head.Kind)
		case "apiVersion":
			err = dec.Decode(&head.APIVersion)
		case "request":
			uid, err := requestUID(dec)
			return head, uid, err
		default:
			err = dec.Decode(new(json.RawMessage))
		}
		if err != nil {
			return head, "", err
		}
	}
	return head, "", errors.New("the AdmissionReview has no request")
}

// requestUID reads the request object up to its uid.
func requestUID(dec *json.Decoder) (types.UID, error) {
	if err := openObject(dec); err != nil {
		return "", err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return "", err
		}
		if key == "uid" {
			var uid types.UID
			err := dec.Decode(&uid)
			return uid, err
		}
		if err := dec.Decode(new(json.RawMessage)); err != nil {
			return "", err
		}
	}
	return "", errors.New("the request has no uid")
}

func openObject(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != json.Delim('{') {
		return fmt.Errorf("want a JSON object, got %v", tok)
	}
	return nil
}

// reservation is a review's part of the budget, given back when its last
// holder is done: the request, and a review that goes on after its
// deadline.
type reservation struct {
	holders atomic.Int32
	release func()
}

func (r *reservation) done() {
	if r.holders.Add(-1) == 0 {
		r.release()
	}
}

// mib formats n bytes in MiB for a message.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
