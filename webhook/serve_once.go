package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
)

// decodesOnce marks the handlers that take the objects of NewHTTPHandler's
// single decode (predecodedFrom); any other handler is served by
// controller-runtime's admission.Webhook alone.
type decodesOnce interface {
	admission.Handler
	decodesOnce()
}

// onceHandler is an admission.Handler of the Reviewer: called by
// controller-runtime (or a test) it decodes the request's raw objects, and
// served by NewHTTPHandler it takes the objects decoded with the review.
type onceHandler admission.HandlerFunc

var _ decodesOnce = onceHandler(nil)

// Handle implements admission.Handler.
func (h onceHandler) Handle(ctx context.Context, req admission.Request) admission.Response {
	return h(ctx, req)
}

func (onceHandler) decodesOnce() {}

// predecoded is what NewHTTPHandler decoded of a review besides the
// request, handed to the handler in the context of the call.
type predecoded struct {
	// uid is the request's, so that a handler called with another request
	// does not take these objects.
	uid     string
	objects *review.Objects
	// body is the review as sent, for the raw object a patch is made from.
	body []byte
}

type predecodedKey struct{}

// predecodedFrom returns the objects decoded with req, nil when req was
// not decoded by NewHTTPHandler.
func predecodedFrom(ctx context.Context, req *admission.Request) *predecoded {
	p, ok := ctx.Value(predecodedKey{}).(*predecoded)
	if !ok || p.uid != string(req.UID) {
		return nil
	}
	return p
}

// objectsOf returns the objects decoded with req, nil for none.
func objectsOf(ctx context.Context, req *admission.Request) *review.Objects {
	if p := predecodedFrom(ctx, req); p != nil {
		return p.objects
	}
	return nil
}

// rawObjectOf returns req's object as raw JSON, as controller-runtime
// decodes it.
func rawObjectOf(ctx context.Context, req *admission.Request) []byte {
	if p := predecodedFrom(ctx, req); p != nil && len(req.Object.Raw) == 0 {
		return rawRequestObject(p.body)
	}
	return req.Object.Raw
}

// maxRequestSize is controller-runtime's limit on a review's body.
const maxRequestSize = 7 << 20

// onceWebhook serves a decodesOnce handler: it decodes the review and its
// objects in one pass and answers exactly as controller-runtime's
// admission.Webhook (hook) would, calling hook.Handle for the panic
// recovery, the logger and the response's completion. Every body it cannot
// decode so goes to hook as it was sent, so that errors (empty body, too
// large, wrong content type, malformed) are answered byte for byte as
// before.
type onceWebhook struct {
	hook *admission.Webhook
}

// ServeHTTP implements http.Handler.
func (o *onceWebhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.Header.Get("Content-Type") != "application/json" {
		o.hook.ServeHTTP(w, r)
		return
	}
	limited := &io.LimitedReader{R: r.Body, N: maxRequestSize}
	body, err := readAllSized(limited, r.ContentLength)
	if err != nil || limited.N <= 0 {
		o.replay(w, r, body, err)
		return
	}
	dec, ok := decodeReview(body)
	if !ok {
		o.replay(w, r, body, nil)
		return
	}
	_ = r.Body.Close()
	req := admission.Request{AdmissionRequest: dec.request}
	logOf(&req).V(5).Info("received request")
	ctx := context.WithValue(r.Context(), predecodedKey{}, &predecoded{uid: string(req.UID), objects: dec.objects, body: body})
	writeTyped(w, o.hook.Handle(ctx, req), dec.gvk)
}

// replay hands r to controller-runtime with the part of its body already
// read put back in front of the rest (or of the error reading it).
func (o *onceWebhook) replay(w http.ResponseWriter, r *http.Request, read []byte, readErr error) {
	rest := r.Body
	if readErr != nil {
		rest = io.NopCloser(errReader{readErr})
	}
	r2 := r.Clone(r.Context())
	r2.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(read), rest), r.Body}
	o.hook.ServeHTTP(w, r2)
}

// writeTyped writes resp as controller-runtime's writeResponseTyped does.
func writeTyped(w io.Writer, resp admission.Response, gvk schema.GroupVersionKind) {
	ar := admissionv1.AdmissionReview{Response: &resp.AdmissionResponse}
	if gvk == (schema.GroupVersionKind{}) {
		ar.SetGroupVersionKind(admissionv1.SchemeGroupVersion.WithKind("AdmissionReview"))
	} else {
		ar.SetGroupVersionKind(gvk)
	}
	if err := json.NewEncoder(w).Encode(ar); err != nil {
		logOf(nil).Error(err, "unable to encode and write the response")
		serverError := admission.Errored(http.StatusInternalServerError, err)
		if err := json.NewEncoder(w).Encode(admissionv1.AdmissionReview{Response: &serverError.AdmissionResponse}); err != nil {
			logOf(nil).Error(err, "still unable to encode and write the InternalServerError response")
		}
		return
	}
	if log := logOf(nil); log.V(5).Enabled() {
		res := ar.Response
		if res.Result != nil {
			log = log.WithValues("code", res.Result.Code, "reason", res.Result.Reason, "message", res.Result.Message)
		}
		log.V(5).Info("wrote response", "requestID", res.UID, "allowed", res.Allowed)
	}
}

// logOf is controller-runtime's admission logger for req (nil: none).
func logOf(req *admission.Request) logr.Logger {
	return admission.DefaultLogConstructor(logf.Log.WithName("admission"), req)
}
