package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apply-hygiene/apply-hygiene/policy"
	"github.com/apply-hygiene/apply-hygiene/webhook"
)

// emptyCluster has nothing stored; a kube.Cluster reads the API server.
type emptyCluster struct{}

func (emptyCluster) Object(_ context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	return nil, fmt.Errorf("reading %s %s/%s: not found", gvr.Resource, namespace, name)
}

func (emptyCluster) Revisions(context.Context, *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return nil, nil
}

func (emptyCluster) NamespaceLabels(context.Context, string) (map[string]string, error) {
	return map[string]string{}, nil
}

// labelRequest is kubectl label deployment/web team=a.
func labelRequest() admission.Request {
	old := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"}}`
	labelled := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","labels":{"team":"a"},` +
		`"managedFields":[{"manager":"kubectl-label","operation":"Update","apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{"f:team":{}}}}}]}}`
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "1", Operation: admissionv1.Update, Name: "web", Namespace: "shop",
		Kind:      metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Resource:  metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		OldObject: runtime.RawExtension{Raw: []byte(old)}, Object: runtime.RawExtension{Raw: []byte(labelled)},
	}}
}

// ExampleReviewer builds the validating handler on an evaluator that
// denies every imperative write, and answers kubectl label with it.
func ExampleReviewer() {
	deny := policy.EvaluatorFunc(func(_ context.Context, in *policy.Input) ([]policy.Decision, error) {
		if in.Classification != policy.Imperative {
			return nil, nil
		}
		return []policy.Decision{{Rule: "no-edits", Action: policy.ActionDeny, Message: "[no-edits] change the manifest and apply it"}}, nil
	})
	r := webhook.NewReviewer(deny, emptyCluster{})
	resp := r.Validating().Handle(context.Background(), labelRequest())
	fmt.Println(resp.Allowed, resp.Result.Code, resp.Result.Message)
	// Output:
	// false 403 [no-edits] change the manifest and apply it
}

// ExampleReviewer_Mutating carries out a prune decision: the mutating
// handler answers with a JSON patch that removes the field, and a warning.
// The decision carries its remedy as data: the JSON patch that the rule
// built (a Rego rule sets it as "patch").
func ExampleReviewer_Mutating() {
	prune := policy.EvaluatorFunc(func(context.Context, *policy.Input) ([]policy.Decision, error) {
		return []policy.Decision{{Rule: policy.RuleOrphanedField, Action: policy.ActionPrune,
			Message: "[orphaned-field] pruned metadata.labels.team", Paths: []string{"metadata.labels.team"},
			Patch: policy.Patch{{Op: policy.OpRemove, Path: "/metadata/labels/team"}}}}, nil
	})
	req := labelRequest()
	// A client-side apply: the mutating pass reviews applies and undos.
	req.Object.Raw = bytes.Replace(req.Object.Raw, []byte(`"kubectl-label"`), []byte(`"kubectl-client-side-apply"`), 1)
	req.Object.Raw = bytes.Replace(req.Object.Raw, []byte(`"labels":{"team":"a"}`),
		[]byte(`"labels":{"team":"a"},"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\"}}\n"}`), 1)
	resp := webhook.NewReviewer(prune, emptyCluster{}).Mutating().Handle(context.Background(), req)
	fmt.Println(resp.Allowed, resp.Warnings)
	for _, p := range resp.Patches {
		fmt.Println(p.Operation, p.Path)
	}
	// Output:
	// true [[orphaned-field] pruned metadata.labels.team]
	// remove /metadata/labels/team
}

// ExampleReviewer_ValidatingEndpoint serves the validating webhook over HTTP, as the
// API server calls it: an AdmissionReview in, an AdmissionReview out.
func ExampleReviewer_ValidatingEndpoint() {
	allow := policy.EvaluatorFunc(func(context.Context, *policy.Input) ([]policy.Decision, error) { return nil, nil })
	h := webhook.NewReviewer(allow, emptyCluster{}).ValidatingEndpoint()
	req := labelRequest()
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  &req.AdmissionRequest,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	post := httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(body)).WithContext(context.Background())
	post.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, post)
	var answer admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rec.Code, answer.Response.UID, answer.Response.Allowed)
	// Output:
	// 200 1 true
}

// printedEvent prints each event it records, as kubectl events would show
// its type, reason and message; done is closed after the first.
type printedEvent struct{ done chan struct{} }

func (p printedEvent) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	obj := regarding.(*unstructured.Unstructured)
	fmt.Printf("event on %s/%s: %s %s %s\n", obj.GetKind(), obj.GetName(), eventtype, reason, fmt.Sprintf(note, args...))
	close(p.done)
}

// ExampleWithEventRecorder records a Warning event for a denied write (off
// the review's path) and shows the audit annotations every review returns.
func ExampleWithEventRecorder() {
	deny := policy.EvaluatorFunc(func(context.Context, *policy.Input) ([]policy.Decision, error) {
		return []policy.Decision{{Rule: "no-labels", Action: policy.ActionDeny, Message: "[no-labels] labels come from the manifest"}}, nil
	})
	recorder := printedEvent{done: make(chan struct{})}
	r := webhook.NewReviewer(deny, emptyCluster{}, webhook.WithEventRecorder(recorder))
	req := labelRequest()
	req.Object.Raw = bytes.Replace(req.Object.Raw, []byte(`"namespace":"shop"`), []byte(`"namespace":"shop","uid":"u-1"`), 1)
	resp := r.Validating().Handle(context.Background(), req)
	<-recorder.done
	fmt.Println(resp.AuditAnnotations)
	// Output:
	// event on Deployment/web: Warning NoLabels [no-labels] labels come from the manifest
	// map[action:deny classification:imperative rule:no-labels]
}
