package webhook

import (
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
)

// reviewBody is an AdmissionReview as controller-runtime decodes it (its
// unversionedAdmissionReview: v1 and v1beta1 have the same fields), except
// that object and oldObject decode straight into maps instead of raw bytes.
type reviewBody struct {
	metav1.TypeMeta `json:",inline"`
	Request         *requestBody                   `json:"request,omitempty"`
	Response        *admissionv1.AdmissionResponse `json:"response,omitempty"`
}

// requestBody is an AdmissionRequest whose object and oldObject are
// decoded values. The fields at this depth hide the embedded request's
// RawExtensions of the same JSON names.
type requestBody struct {
	admissionv1.AdmissionRequest `json:",inline"`
	Object                       any `json:"object,omitempty"`
	OldObject                    any `json:"oldObject,omitempty"`
}

// decodedReview is an AdmissionReview decoded once.
type decodedReview struct {
	// request is the review's request, its objects left without raw bytes.
	request admissionv1.AdmissionRequest
	// objects are its object and oldObject, decoded.
	objects *review.Objects
	// gvk is the review's kind, which the answer repeats (v1 or v1beta1).
	gvk schema.GroupVersionKind
}

// decodeReview decodes body, an AdmissionReview, in one pass: the request
// and its objects, with the JSON decoder that controller-runtime uses for
// the review and unstructured.Unstructured for objects (sigs.k8s.io/json,
// case-sensitive, integers as int64). It returns false for any body that
// it cannot prove controller-runtime and internal/review would decode to
// the same request and objects; the caller then hands the body to
// controller-runtime, which answers it exactly as before: not starting with
// '{' (controller-runtime would try YAML), invalid JSON, a top-level key that
// encoding/json's case-insensitive match takes for apiVersion or kind, an
// apiVersion that is no group/version, no request, a subresource request
// (its Scale object is read raw), an UPDATE whose objects are no JSON
// objects with a kind (their errors quote the raw bytes).
func decodeReview(body []byte) (*decodedReview, bool) {
	if len(body) == 0 || body[0] != '{' {
		return nil, false
	}
	var rb reviewBody
	if err := kjson.UnmarshalCaseSensitivePreserveInts(body, &rb); err != nil {
		return nil, false
	}
	if rb.Request == nil || !exactTypeKeys(body) {
		return nil, false
	}
	gv, err := schema.ParseGroupVersion(rb.APIVersion)
	if err != nil {
		return nil, false
	}
	req := rb.Request.AdmissionRequest
	objs, ok := review.DecodedObjects(&req, rb.Request.Object, rb.Request.OldObject)
	if !ok {
		return nil, false
	}
	return &decodedReview{request: req, objects: objs, gvk: gv.WithKind(rb.Kind)}, true
}

// reviewObject is the raw object of an AdmissionReview, decoded as
// controller-runtime decodes it.
type reviewObject struct {
	Request *struct {
		Object runtime.RawExtension `json:"object"`
	} `json:"request"`
}

// rawRequestObject returns the raw bytes of body's request.object, decoded again:
// only a mutation's patch needs them, a few reviews in a hundred.
func rawRequestObject(body []byte) []byte {
	var ro reviewObject
	if err := kjson.UnmarshalCaseSensitivePreserveInts(body, &ro); err != nil || ro.Request == nil {
		return nil
	}
	return ro.Request.Object.Raw
}
