package review_test

import (
	"context"
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// noCluster has nothing stored: these requests need no reads but the
// namespace's labels.
type noCluster struct{}

func (noCluster) Object(_ context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	return nil, fmt.Errorf("reading %s %s/%s: not found", gvr.Resource, namespace, name)
}

func (noCluster) Revisions(context.Context, *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return nil, nil
}

func (noCluster) NamespaceLabels(context.Context, string) (map[string]string, error) {
	return map[string]string{}, nil
}

// ExampleReviewer reviews a kubectl label of a Deployment (an imperative
// write) with a policy that says what it saw, and a request without a UID,
// which is malformed.
func ExampleReviewer() {
	evaluator := policy.EvaluatorFunc(func(_ context.Context, in *policy.Input) ([]policy.Decision, error) {
		return []policy.Decision{{Rule: "seen", Action: policy.ActionWarn, Message: "[seen] " + string(in.Classification)}}, nil
	})
	r := review.NewReviewer(nil, evaluator, noCluster{})
	old := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"}}`
	labelled := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","labels":{"team":"a"},` +
		`"managedFields":[{"manager":"kubectl-label","operation":"Update","apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{"f:team":{}}}}}]}}`
	req := &admissionv1.AdmissionRequest{
		UID: "1", Operation: admissionv1.Update, Name: "web", Namespace: "shop",
		Kind:      metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		OldObject: runtime.RawExtension{Raw: []byte(old)}, Object: runtime.RawExtension{Raw: []byte(labelled)},
	}
	ctx := context.Background()
	rv, err := r.Review(ctx, req, review.Validate)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rv.Classification(), rv.DecisionsWith(policy.ActionWarn)[0].Message)
	if _, err := r.Review(ctx, &admissionv1.AdmissionRequest{}, review.Validate); errors.Is(err, review.ErrBadRequest) {
		fmt.Println(err)
	}
	// Output:
	// imperative [seen] imperative
	// bad admission request: the AdmissionReview has no request (uid, operation and kind are required)
}
