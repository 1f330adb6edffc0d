package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
)

// reviewBody is an AdmissionReview as controller-runtime decodes it (its
// unversionedAdmissionReview: v1 and v1beta1 have the same fields), except
// that object and oldObject decode straight into values instead of raw
// bytes.
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
	// request is the review's request (empty when it has none), its
	// objects left without raw bytes.
	request admissionv1.AdmissionRequest
	// objects are its object and oldObject, decoded.
	objects *review.Objects
	// gvk is the review's kind, which the answer repeats (v1 or v1beta1).
	gvk schema.GroupVersionKind
}

var (
	// errEmptyBody refuses a body of white space or nothing, as
	// controller-runtime refuses a request without a body.
	errEmptyBody = errors.New("request body is empty")
	// errNotJSONObject refuses a body that is not a JSON object (YAML,
	// null): the API server sends an AdmissionReview as JSON.
	errNotJSONObject = errors.New("the request body is not a JSON object: an AdmissionReview is sent as JSON")
)

// decode decodes body, an AdmissionReview v1 or v1beta1, in one pass: the
// request and its objects, with the JSON decoder that controller-runtime
// uses for the review and unstructured.Unstructured for objects
// (sigs.k8s.io/json: case-sensitive, integers as int64). Every review an
// API server sends decodes to the request and objects that
// controller-runtime's decoder and internal/review's decoding of the raw
// objects make of it (decode_once_*_test.go hold it to that). A review
// without a request decodes, empty: the review answers it (see
// review.ErrBadRequest). The error names what is wrong with a body that
// is not JSON, or not an AdmissionReview's (a field of another type: the
// decoder's error names it); an apiVersion that is no group/version gets
// controller-runtime's error.
func decode(body []byte) (*decodedReview, error) {
	switch trimmed := bytes.TrimLeft(body, " \t\r\n"); {
	case len(trimmed) == 0:
		return nil, errEmptyBody
	case trimmed[0] != '{':
		return nil, errNotJSONObject
	}
	// As controller-runtime, decode the request into one that is there
	// before: a later "request": null does not take it away.
	req := &requestBody{}
	rb := reviewBody{Request: req}
	var objectsErr error
	if err := kjson.UnmarshalCaseSensitivePreserveInts(body, &rb); err != nil {
		if syntax, _ := kjson.SyntaxErrorOffset(err); syntax {
			return nil, fmt.Errorf("the request body is not valid JSON: %w", err)
		}
		which, inObject := objectOf(err)
		if !inObject {
			return nil, fmt.Errorf("the request body is not an AdmissionReview: %w", err)
		}
		// The decoder goes on past a value of the wrong type (a number
		// beyond float64 in a RawExtension that the API server keeps as
		// sent, such as a ControllerRevision's data): the rest of the
		// review, its uid and kind included, is decoded, and the review
		// answers it as one whose objects do not decode.
		objectsErr = fmt.Errorf("%w: decoding %s: %w", review.ErrBadRequest, which, err)
	}
	gv, err := schema.ParseGroupVersion(rb.APIVersion)
	if err != nil {
		return nil, err
	}
	return &decodedReview{
		request: req.AdmissionRequest,
		objects: &review.Objects{Object: req.Object, OldObject: req.OldObject, Err: objectsErr},
		gvk:     gv.WithKind(rb.Kind),
	}, nil
}

// objectOf returns which of the request's objects ("object" or
// "oldObject") holds the value that err, a decoding error, names; false
// when err names no value inside one.
func objectOf(err error) (string, bool) {
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) {
		return "", false
	}
	for _, which := range []string{"object", "oldObject"} {
		if field := "request." + which; typeErr.Field == field || strings.HasPrefix(typeErr.Field, field+".") {
			return which, true
		}
	}
	return "", false
}
