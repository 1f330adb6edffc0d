package kube

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
)

func hpa(namespace, name, apiVersion, kind, target string) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: apiVersion, Kind: kind, Name: target},
			MaxReplicas:    10,
		},
	}
}

// hpas are the autoscalers of the tests: two scale Deployment shop/web
// (through either apps version), the others name something else.
func hpas() []*autoscalingv2.HorizontalPodAutoscaler {
	return []*autoscalingv2.HorizontalPodAutoscaler{
		hpa("shop", "web", "apps/v1", "Deployment", "web"),
		hpa("shop", "web-old-version", "apps/v1beta2", "Deployment", "web"),
		hpa("shop", "statefulset", "apps/v1", "StatefulSet", "web"),
		hpa("shop", "other-name", "apps/v1", "Deployment", "api"),
		hpa("shop", "other-group", "example.com/v1", "Deployment", "web"),
		hpa("other", "other-namespace", "apps/v1", "Deployment", "web"),
	}
}

func deployment(namespace, name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetAPIVersion("apps/v1")
	obj.SetKind("Deployment")
	obj.SetNamespace(namespace)
	obj.SetName(name)
	return obj
}

func names(list []*autoscalingv2.HorizontalPodAutoscaler) []string {
	var out []string
	for _, h := range list {
		out = append(out, h.Name)
	}
	return out
}

var wantWeb = []string{"web", "web-old-version"}

func TestAutoscalersCacheFindsTheTargetingOnes(t *testing.T) {
	var objs []runtime.Object
	for _, h := range hpas() {
		h.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
		objs = append(objs, h)
	}
	a, err := NewAutoscalers(fake.NewClientset(objs...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Targeting(deployment("shop", "web")); !errors.Is(err, ErrAutoscalersNotSynced) {
		t.Fatalf("before Start: error %v, want ErrAutoscalersNotSynced", err)
	}
	go func() { _ = a.Start(t.Context()) }()
	deadline := time.Now().Add(10 * time.Second)
	for !a.informer.HasSynced() {
		if time.Now().After(deadline) {
			t.Fatal("the cache did not sync in 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	got, err := NewCluster(nil, 0, WithAutoscalers(a)).Autoscalers(t.Context(), deployment("shop", "web"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantWeb, names(got)); diff != "" {
		t.Errorf("autoscalers of shop/web (-want +got):\n%s", diff)
	}
	for _, h := range got {
		if h.ManagedFields != nil {
			t.Errorf("%s keeps its managedFields in the cache", h.Name)
		}
	}
	none, err := a.Targeting(deployment("shop", "db"))
	if err != nil || len(none) != 0 {
		t.Errorf("autoscalers of shop/db = %v, %v; want none", names(none), err)
	}
}

func TestListAutoscalers(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := autoscalingv2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var objs []runtime.Object
	for _, h := range hpas() {
		objs = append(objs, h)
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme,
		map[schema.GroupVersionResource]string{hpaGVR: "HorizontalPodAutoscalerList"}, objs...)
	got, err := ListAutoscalers(t.Context(), client, deployment("shop", "web"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantWeb, names(got)); diff != "" {
		t.Errorf("autoscalers of shop/web (-want +got):\n%s", diff)
	}
	// A Cluster without a cache knows none, and lists nothing.
	before := len(client.Actions())
	none, err := NewCluster(client, 0).Autoscalers(t.Context(), deployment("shop", "web"))
	if err != nil || len(none) != 0 || len(client.Actions()) != before {
		t.Errorf("Cluster without a cache: %v, %v, %d calls; want none, no error, no call", names(none), err, len(client.Actions())-before)
	}
}
