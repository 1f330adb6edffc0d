package review_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// An UPDATE whose objects no API server sends is refused with a message
// that says what is wrong, the same whether its objects come raw (Review)
// or decoded with the request (ReviewDecoded).
func TestReviewRefusesMalformedObjectsOnOnePath(t *testing.T) {
	const deployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"}}`
	tests := map[string]struct {
		object, oldObject string // raw JSON; "" for none
		want              string
	}{
		"no object":        {oldObject: deployment, want: "bad admission request: object is missing"},
		"a null oldObject": {object: deployment, oldObject: "null", want: "bad admission request: oldObject is missing"},
		"an object that is a string": {object: `"spec"`, oldObject: deployment,
			want: "bad admission request: object is a JSON string, not an object"},
		"an oldObject that is an array": {object: deployment, oldObject: `[1]`,
			want: "bad admission request: oldObject is a JSON array, not an object"},
		"an object without kind": {object: `{"metadata":{"name":"web"}}`, oldObject: deployment,
			want: "bad admission request: object is an object without apiVersion/kind, but the request declares Deployment (apps/v1)"},
		"an object of another kind": {object: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web"}}`, oldObject: deployment,
			want: "bad admission request: object is a ConfigMap (v1), but the request declares Deployment (apps/v1)"},
		"an object of another name": {object: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"api"}}`, oldObject: deployment,
			want: `bad admission request: object is named "api", but the request names "web"`},
		"managedFields that are no list": {object: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","managedFields":"x"}}`,
			oldObject: deployment, want: "bad admission request: object: metadata.managedFields is a string, not a list"},
	}
	r := review.NewReviewer(nil, policy.EvaluatorFunc(nil), noCluster{})
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := &admissionv1.AdmissionRequest{
				UID: "1", Operation: admissionv1.Update, Name: "web", Namespace: "shop",
				Kind:   metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
				Object: rawOf(tc.object), OldObject: rawOf(tc.oldObject),
			}
			_, errRaw := r.Review(t.Context(), req, review.Validate)
			decoded := &review.Objects{Object: decode(t, tc.object), OldObject: decode(t, tc.oldObject)}
			_, errDecoded := r.ReviewDecoded(t.Context(), &admissionv1.AdmissionRequest{
				UID: req.UID, Operation: req.Operation, Name: req.Name, Namespace: req.Namespace, Kind: req.Kind,
			}, decoded, review.Validate)
			if diff := cmp.Diff([]string{tc.want, tc.want}, []string{errText(errRaw), errText(errDecoded)}); diff != "" {
				t.Errorf("errors of Review and ReviewDecoded (-want +got):\n%s", diff)
			}
		})
	}
}

// A raw object that is not JSON (only a caller in process can send one)
// is a bad request too.
func TestReviewRefusesRawObjectsThatAreNotJSON(t *testing.T) {
	r := review.NewReviewer(nil, policy.EvaluatorFunc(nil), noCluster{})
	req := &admissionv1.AdmissionRequest{
		UID: "1", Operation: admissionv1.Update, Name: "web",
		Kind:   metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Object: rawOf("{"), OldObject: rawOf("{}"),
	}
	_, err := r.Review(t.Context(), req, review.Validate)
	if diff := cmp.Diff("bad admission request: decoding object: unexpected end of JSON input", errText(err)); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

func rawOf(s string) runtime.RawExtension {
	return runtime.RawExtension{Raw: []byte(s)}
}

// decode decodes s as the webhook decodes a request's object; nil for "".
func decode(t *testing.T, s string) any {
	t.Helper()
	if s == "" {
		return nil
	}
	var v any
	if err := kjson.UnmarshalCaseSensitivePreserveInts([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
