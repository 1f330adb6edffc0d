package review

import (
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

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

// decodeObject decodes one object of the request and checks that it is of
// the kind the request declares.
func decodeObject(raw runtime.RawExtension, want schema.GroupVersionKind, which string) (*unstructured.Unstructured, error) {
	if len(raw.Raw) == 0 {
		return nil, fmt.Errorf("%w: %s is empty", ErrBadRequest, which)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw.Raw); err != nil {
		return nil, fmt.Errorf("%w: decoding %s: %w", ErrBadRequest, which, err)
	}
	return checkObject(obj, want, which)
}

// checkObject checks that a decoded object of the request is of the kind
// the request declares and that its managedFields are well formed.
func checkObject(obj *unstructured.Unstructured, want schema.GroupVersionKind, which string) (*unstructured.Unstructured, error) {
	if got := obj.GroupVersionKind(); got != want {
		return nil, fmt.Errorf("%w: %s is a %s, but the request declares %s", ErrBadRequest, which, describe(got), describe(want))
	}
	// The API server writes managedFields; malformed ones mean the review
	// was not sent by one.
	if _, err := merge.ReadManagedFields(obj); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadRequest, which, err)
	}
	return obj, nil
}

// decodePair decodes object and oldObject of an UPDATE.
func decodePair(req *admissionv1.AdmissionRequest) (old, new *unstructured.Unstructured, err error) {
	want := schema.GroupVersionKind{Group: req.Kind.Group, Version: req.Kind.Version, Kind: req.Kind.Kind}
	if new, err = decodeObject(req.Object, want, "object"); err != nil {
		return nil, nil, err
	}
	if old, err = decodeObject(req.OldObject, want, "oldObject"); err != nil {
		return nil, nil, err
	}
	return checkName(req, old, new)
}

// checkName checks that the object is the one the request names.
func checkName(req *admissionv1.AdmissionRequest, old, new *unstructured.Unstructured) (*unstructured.Unstructured, *unstructured.Unstructured, error) {
	if new.GetName() != req.Name && req.Name != "" {
		return nil, nil, fmt.Errorf("%w: object is named %q, but the request names %q", ErrBadRequest, new.GetName(), req.Name)
	}
	return old, new, nil
}

func describe(gvk schema.GroupVersionKind) string {
	if gvk.Kind == "" {
		return "object without apiVersion/kind"
	}
	return gvk.Kind + " (" + gvk.GroupVersion().String() + ")"
}
