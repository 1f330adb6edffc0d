package review_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
)

// Every Scale the API server sends has a count: replicas is omitempty, so
// a scale to zero arrives without one. Only a body no API server writes
// is a bad request.
func TestScaleReplicas(t *testing.T) {
	tests := map[string]struct {
		scale   string
		want    int64
		wantErr bool
	}{
		"a scale to 3": {scale: `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web"},"spec":{"replicas":3}}`, want: 3},
		"a scale to zero, as the API server sends it": {
			scale: `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web"},"spec":{},"status":{"replicas":3}}`},
		"a Scale with a null spec":    {scale: `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web"},"spec":null}`},
		"a Scale without a spec":      {scale: `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web"}}`},
		"a count that is no integer":  {scale: `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web"},"spec":{"replicas":"3"}}`, wantErr: true},
		"an object that is no Scale":  {scale: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":3}}`, wantErr: true},
		"a request without an object": {wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := &admissionv1.AdmissionRequest{
				UID: "1", Operation: admissionv1.Update, Name: "web", Namespace: "shop", SubResource: "scale",
				Kind:   metav1.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"},
				Object: runtime.RawExtension{Raw: []byte(tc.scale)},
			}
			objs, err := review.DecodeObjects(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := review.ScaleReplicas(req, objs)
			if tc.wantErr {
				if !errors.Is(err, review.ErrBadRequest) {
					t.Fatalf("error %v, want a bad request", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("replicas (-want +got):\n%s", diff)
			}
		})
	}
}
