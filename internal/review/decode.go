package review

import (
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// ErrBadRequest marks a request that cannot be reviewed as sent; the
// webhook answers it with HTTP 400. Only what no API server sends is one
// (no request, an UPDATE without its objects, objects of another kind or
// name than the request declares, malformed managedFields): every request
// kube-apiserver really sends gets an allow, a warning or a denial, since
// under failurePolicy Fail an error fails the user's write and under
// Ignore it fails open.
var ErrBadRequest = errors.New("bad admission request")

// Objects are the object and oldObject of a request, decoded: each is the
// value sigs.k8s.io/json decodes from the JSON (case-sensitive, integers
// as int64 and other numbers as float64, as unstructured.Unstructured
// decodes an object): a map[string]any for a JSON object, nil when absent
// or null. The webhook decodes them with the AdmissionReview, in one pass
// (ReviewDecoded); Review decodes a request's raw bytes into them
// (DecodeObjects). Neither value is modified.
type Objects struct {
	// Object is the request's object; OldObject its oldObject.
	Object, OldObject any
	// Err, when set, says why they did not decode; it wraps ErrBadRequest,
	// and the review answers it where it would read them (an UPDATE), as
	// Review answers DecodeObjects' error.
	Err error
}

// DecodeObjects decodes the raw object and oldObject of req, for a caller
// that holds them raw (controller-runtime's admission.Request, a captured
// review). The error wraps ErrBadRequest: one of them is not JSON.
func DecodeObjects(req *admissionv1.AdmissionRequest) (*Objects, error) {
	object, err := decodeRaw(req.Object, "object")
	if err != nil {
		return nil, err
	}
	oldObject, err := decodeRaw(req.OldObject, "oldObject")
	if err != nil {
		return nil, err
	}
	return &Objects{Object: object, OldObject: oldObject}, nil
}

// decodeRaw decodes one raw object of a request; nil when it has none.
func decodeRaw(raw runtime.RawExtension, which string) (any, error) {
	if len(raw.Raw) == 0 {
		return nil, nil
	}
	var v any
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw.Raw, &v); err != nil {
		return nil, fmt.Errorf("%w: decoding %s: %w", ErrBadRequest, which, err)
	}
	return v, nil
}

// objectOf checks one decoded object of the request (which names it): a
// JSON object of the kind the request declares, whose managedFields are
// well formed.
func objectOf(v any, want schema.GroupVersionKind, which string) (*unstructured.Unstructured, error) {
	m, ok := v.(map[string]any)
	switch {
	case v == nil:
		return nil, fmt.Errorf("%w: %s is missing", ErrBadRequest, which)
	case !ok:
		return nil, fmt.Errorf("%w: %s is a JSON %s, not an object", ErrBadRequest, which, merge.JSONType(v, "array"))
	}
	obj := &unstructured.Unstructured{Object: m}
	if got := obj.GroupVersionKind(); got != want {
		return nil, fmt.Errorf("%w: %s is %s, but the request declares %s", ErrBadRequest, which, withArticle(got), describe(want))
	}
	// The API server writes managedFields; malformed ones mean the review
	// was not sent by one.
	if _, err := merge.ReadManagedFields(obj); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadRequest, which, err)
	}
	return obj, nil
}

// pair returns the old and new object of an UPDATE, checked: of the
// request's kind, the object the one the request names.
func pair(req *admissionv1.AdmissionRequest, objs *Objects) (old, new *unstructured.Unstructured, err error) {
	want := requestKind(req)
	if new, err = objectOf(objs.Object, want, "object"); err != nil {
		return nil, nil, err
	}
	if old, err = objectOf(objs.OldObject, want, "oldObject"); err != nil {
		return nil, nil, err
	}
	if new.GetName() != req.Name && req.Name != "" {
		return nil, nil, fmt.Errorf("%w: object is named %q, but the request names %q", ErrBadRequest, new.GetName(), req.Name)
	}
	return old, new, nil
}

// requestKind is the kind req declares for its objects.
func requestKind(req *admissionv1.AdmissionRequest) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: req.Kind.Group, Version: req.Kind.Version, Kind: req.Kind.Kind}
}

// describe names gvk: "Deployment (apps/v1)".
func describe(gvk schema.GroupVersionKind) string {
	if gvk.Kind == "" {
		return "object without apiVersion/kind"
	}
	return gvk.Kind + " (" + gvk.GroupVersion().String() + ")"
}

// withArticle is describe with "a" or "an" before it.
func withArticle(gvk schema.GroupVersionKind) string {
	if gvk.Kind == "" {
		return "an " + describe(gvk)
	}
	return "a " + describe(gvk)
}
