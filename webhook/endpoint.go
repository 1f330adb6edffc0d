package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/internal/tracing"
)

// Handlers returns the server's admission endpoints by path, "/mutate" and
// "/validate": the one place where the HTTP handling of a review is
// assembled. A wrapper for every review (tracing, say) goes around the
// handlers returned here.
func (r *Reviewer) Handlers() map[string]http.Handler {
	return map[string]http.Handler{
		"/mutate":   r.MutatingEndpoint(),
		"/validate": r.ValidatingEndpoint(),
	}
}

// MutatingEndpoint serves the mutating webhook (see Mutating) as an
// AdmissionReview endpoint, as ValidatingEndpoint serves the validating one.
func (r *Reviewer) MutatingEndpoint() http.Handler {
	return &endpoint{reviewer: r, pass: review.Mutate, name: passName(review.Mutate)}
}

// ValidatingEndpoint serves the validating webhook (see Validating) as an
// AdmissionReview endpoint, answering as controller-runtime's
// admission.Webhook answers, byte for byte, with three differences: a
// review answered as malformed (code 400) also gets HTTP status 400, and a
// body over controller-runtime's 7 MiB limit HTTP 413, so that the API
// server counts it as a failed call and applies the webhook's
// failurePolicy; a review that does not fit in the memory budget (see
// WithMemoryBudget) is answered at once, unread, as the failure policy
// says; and a review must end within most of the timeout the API server
// sends (see withAPIServerDeadline), or is answered as the failure policy
// says. The review and its objects are decoded once.
func (r *Reviewer) ValidatingEndpoint() http.Handler {
	return &endpoint{reviewer: r, pass: review.Validate, name: passName(review.Validate)}
}

// endpoint is the HTTP endpoint of one webhook.
type endpoint struct {
	reviewer *Reviewer
	pass     review.Pass
	// name names the webhook in metrics: "mutate" or "validate".
	name string
}

// call is the state of one review on its way through the endpoint.
type call struct {
	// objects are the request's object and oldObject, decoded with the
	// review; nil when they are raw in the request (an admission.Handler
	// called in process).
	objects *review.Objects
	// timeout is the API server's timeout for the call (0: none sent).
	timeout time.Duration
	// reservation is the review's part of the memory budget (nil: none).
	reservation *reservation
	// decode is the span of reading and decoding the review (nil: tracing
	// off, or a review decoded by the caller).
	decode *tracing.Decode
}

// original returns req's object as JSON, the original of a mutation's
// patch: the decoded object encoded again (only a review that patches pays
// for it), or the raw object of a request decoded by the caller.
func (c *call) original(req *admission.Request) ([]byte, error) {
	if c.objects == nil {
		return req.Object.Raw, nil
	}
	raw, err := json.Marshal(c.objects.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding the object for the patch: %w", err)
	}
	return raw, nil
}

// objectsOf returns req's objects: c's, decoded with the review, or
// req's raw ones decoded (review.DecodeObjects) for a request decoded by
// the caller.
func (c *call) objectsOf(req *admission.Request) (*review.Objects, error) {
	if c.objects != nil {
		return c.objects, nil
	}
	return review.DecodeObjects(&req.AdmissionRequest)
}

// hold keeps the call's reservation, if any, until the returned func is
// called.
func (c *call) hold() func() {
	if c.reservation == nil {
		return func() {}
	}
	c.reservation.holders.Add(1)
	return c.reservation.done
}

var _ http.Handler = (*endpoint)(nil)

// ServeHTTP implements http.Handler: budget, deadline, bounded read, one
// decode, review, typed answer.
func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &call{decode: tracing.StartDecode(r.Context(), e.reviewer.opts.tracer)}
	defer c.decode.End()
	if b := e.reviewer.opts.budget; b != nil {
		res, ok := e.reserve(w, r, b)
		if !ok {
			return
		}
		c.reservation = res
		defer res.done()
	}
	ctx, timeout, cancel := withAPIServerDeadline(r)
	defer cancel()
	c.timeout = timeout
	resp, gvk := e.read(ctx, c, r)
	writeResponse(w, resp, gvk)
}

// reserve takes the cost of r's review from the budget b; when it does not
// fit, it answers r (see answerOverload) and returns false.
func (e *endpoint) reserve(w http.ResponseWriter, r *http.Request, b *memoryBudget) (*reservation, bool) {
	if r.ContentLength < 0 {
		sized(r)
	}
	cost := b.cost(r.ContentLength)
	if !b.sem.TryAcquire(cost) {
		e.reviewer.answerOverload(w, r, e.name, fmt.Errorf("%w: %s of this review do not fit in the %s the reviews in flight may hold",
			errOverload, mib(cost), mib(b.size)))
		return nil, false
	}
	res := &reservation{release: func() { b.sem.Release(cost) }}
	res.holders.Store(1)
	return res, true
}

// read reads and decodes r's review and reviews it, as controller-runtime's
// admission.Webhook.ServeHTTP does, with its errors and their logs; a body
// that is no JSON AdmissionReview gets decode's error instead of the one
// controller-runtime's decoder gave.
func (e *endpoint) read(ctx context.Context, c *call, r *http.Request) (admission.Response, *schema.GroupVersionKind) {
	if r.Body == nil || r.Body == http.NoBody {
		err := errors.New("request body is empty")
		logOf(nil).Error(err, "bad request")
		return admission.Errored(http.StatusBadRequest, err), nil
	}
	defer func() { _ = r.Body.Close() }()
	limited := &io.LimitedReader{R: r.Body, N: maxRequestSize}
	body, err := readAllSized(limited, r.ContentLength)
	if err != nil {
		logOf(nil).Error(err, "unable to read the body from the incoming request")
		return admission.Errored(http.StatusBadRequest, err), nil
	}
	if limited.N <= 0 {
		err := fmt.Errorf("request entity is too large; limit is %d bytes", maxRequestSize)
		logOf(nil).Error(err, "unable to read the body from the incoming request; limit reached")
		return admission.Errored(http.StatusRequestEntityTooLarge, err), nil
	}
	if contentType := r.Header.Get("Content-Type"); contentType != "application/json" {
		err := fmt.Errorf("contentType=%s, expected application/json", contentType)
		logOf(nil).Error(err, "unable to process a request with unknown content type")
		return admission.Errored(http.StatusBadRequest, err), nil
	}
	dec, err := decode(body)
	if err != nil {
		logOf(nil).Error(err, "unable to decode the request")
		return admission.Errored(http.StatusBadRequest, err), nil
	}
	req := admission.Request{AdmissionRequest: dec.request}
	c.objects = dec.objects
	logOf(&req).V(5).Info("received request")
	return e.handle(ctx, c, req), &dec.gvk
}

// handle runs the endpoint's pass on req as controller-runtime's
// admission.Webhook.Handle does, the request's logger in ctx and the
// response completed, but for a panic: it is a failed review like any
// other (errored: counted with reason "panic", answered as the failure
// policy says), where controller-runtime answers code 500, which the API
// server takes for a denial whatever the failure policy.
func (e *endpoint) handle(ctx context.Context, c *call, req admission.Request) (resp admission.Response) {
	reqLog := logOf(&req)
	ctx = logf.IntoContext(ctx, reqLog)
	defer func() {
		if p := recover(); p != nil {
			for _, fn := range utilruntime.PanicHandlers {
				fn(ctx, p)
			}
			resp = e.reviewer.errored(ctx, e.name, fmt.Errorf("%w: %v [recovered]", errPanicked, p))
			resp.UID = req.UID
		}
	}()
	if e.pass == review.Mutate {
		resp = e.reviewer.mutate(ctx, c, req)
	} else {
		resp = e.reviewer.validate(ctx, c, req)
	}
	if err := resp.Complete(req); err != nil {
		reqLog.Error(err, "unable to encode response")
		resp = admission.Errored(http.StatusInternalServerError, errors.New("unable to encode response"))
		resp.UID = req.UID
	}
	return resp
}

// writeResponse writes resp as controller-runtime's admission.Webhook
// does, with HTTP status 400 or 413 for a review refused as malformed or
// too large (see refused): an answer to a review that was decoded repeats
// its kind, gvk (v1 when empty); one to a review that was not (gvk nil)
// has none.
func writeResponse(w http.ResponseWriter, resp admission.Response, gvk *schema.GroupVersionKind) {
	ar := admissionv1.AdmissionReview{Response: &resp.AdmissionResponse}
	switch {
	case gvk == nil:
	case *gvk == (schema.GroupVersionKind{}):
		ar.SetGroupVersionKind(admissionv1.SchemeGroupVersion.WithKind("AdmissionReview"))
	default:
		ar.SetGroupVersionKind(*gvk)
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(ar); err != nil {
		logOf(nil).Error(err, "unable to encode and write the response")
		buf.Reset()
		serverError := admission.Errored(http.StatusInternalServerError, err)
		if err := json.NewEncoder(&buf).Encode(admissionv1.AdmissionReview{Response: &serverError.AdmissionResponse}); err != nil {
			logOf(nil).Error(err, "still unable to encode and write the InternalServerError response")
		}
	} else if log := logOf(nil); log.V(5).Enabled() {
		if res := ar.Response; res.Result != nil {
			log = log.WithValues("code", res.Result.Code, "reason", res.Result.Reason, "message", res.Result.Message)
		}
		log.V(5).Info("wrote response", "requestID", ar.Response.UID, "allowed", ar.Response.Allowed)
	}
	status := http.StatusOK
	if !resp.Allowed && resp.Result != nil && refused(resp.Result.Code) {
		status = int(resp.Result.Code)
	}
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// refused reports whether a review's result code means the request was not
// reviewed at all: malformed (400) or too large to read (413).
func refused(code int32) bool {
	return code == http.StatusBadRequest || code == http.StatusRequestEntityTooLarge
}

// maxRequestSize is controller-runtime's limit on a review's body.
const maxRequestSize = 7 << 20

// logOf is controller-runtime's admission logger for req (nil: none).
func logOf(req *admission.Request) logr.Logger {
	return admission.DefaultLogConstructor(logf.Log.WithName("admission"), req)
}
