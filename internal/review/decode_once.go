package review

import (
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Objects are the object and oldObject of a request, already decoded by
// the caller in the same pass as the request (the webhook decodes an
// AdmissionReview once): each is the map that unstructured.Unstructured's
// JSON decoding makes of the request's raw bytes, integers as int64 and
// other numbers as float64. Neither map is modified.
type Objects struct {
	// Object is the request's object; OldObject its oldObject.
	Object, OldObject map[string]any
}

// DecodedObjects returns req's object and oldObject, as a caller that
// decodes an AdmissionReview in one pass decoded them, for ReviewDecoded,
// and whether ReviewDecoded may review req on them. It is false when req is a /scale or other subresource request (the review then
// reads the raw Scale object) or when an UPDATE's object or oldObject is
// not a JSON object with a kind that unstructured.Unstructured decodes:
// Review answers those with errors that quote the raw bytes, so the caller
// must keep them raw and call Review.
func DecodedObjects(req *admissionv1.AdmissionRequest, object, oldObject any) (*Objects, bool) {
	if req.SubResource != "" {
		return nil, false
	}
	newMap, newOK := object.(map[string]any)
	oldMap, oldOK := oldObject.(map[string]any)
	if req.Operation != admissionv1.Update {
		// Review answers before it looks at the objects.
		return &Objects{Object: newMap, OldObject: oldMap}, true
	}
	if !newOK || !oldOK || !hasKind(newMap) || !hasKind(oldMap) {
		return nil, false
	}
	return &Objects{Object: newMap, OldObject: oldMap}, true
}

// hasKind reports whether unstructured.Unstructured's JSON decoding would
// accept m: it requires a kind, read with a parsable apiVersion.
func hasKind(m map[string]any) bool {
	return (&unstructured.Unstructured{Object: m}).GroupVersionKind().Kind != ""
}

// decodedPair is decodePair on objects already decoded.
func decodedPair(req *admissionv1.AdmissionRequest, objs *Objects) (old, new *unstructured.Unstructured, err error) {
	want := schema.GroupVersionKind{Group: req.Kind.Group, Version: req.Kind.Version, Kind: req.Kind.Kind}
	if new, err = checkObject(&unstructured.Unstructured{Object: objs.Object}, want, "object"); err != nil {
		return nil, nil, err
	}
	if old, err = checkObject(&unstructured.Unstructured{Object: objs.OldObject}, want, "oldObject"); err != nil {
		return nil, nil, err
	}
	return checkName(req, old, new)
}
