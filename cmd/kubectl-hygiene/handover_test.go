package main

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

var statefulsets = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}

// An apply between handover's read and its write changes last-applied:
// the guarded patch fails, nothing is written, and handover says to run
// it again.
func TestHandoverLosesToAConcurrentApply(t *testing.T) {
	connect := fakeCluster(t, "testdata/seed004/live.yaml")
	c, err := connect(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := c.dynamic.(*dynamicfake.FakeDynamicClient)
	const applied = `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"my-wonderhoy-app","namespace":"default"},"spec":{"replicas":4}}` + "\n"
	client.PrependReactor("patch", "statefulsets", func(clienttesting.Action) (bool, runtime.Object, error) {
		// The concurrent apply, right before handover's patch arrives.
		obj, err := client.Tracker().Get(statefulsets, "default", "my-wonderhoy-app")
		if err != nil {
			return true, nil, err
		}
		acc, err := meta.Accessor(obj)
		if err != nil {
			return true, nil, err
		}
		ann := acc.GetAnnotations()
		ann[merge.LastAppliedAnnotation] = applied
		acc.SetAnnotations(ann)
		return false, nil, client.Tracker().Update(statefulsets, obj, "default")
	})
	stdout, stderr, code := runCluster(t, connect, "handover", "statefulset/my-wonderhoy-app", "spec.replicas", "-n", "default")
	if code != exitFailure || stdout != "" {
		t.Errorf("exit %d, stdout %q; want exit %d and nothing printed", code, stdout, exitFailure)
	}
	if want := "error: StatefulSet default/my-wonderhoy-app: last-applied changed since it was read (an apply in between?); nothing written, run handover again: "; !strings.HasPrefix(stderr, want) {
		t.Errorf("stderr %q, want it to start with %q", stderr, want)
	}
	obj, err := client.Resource(statefulsets).Namespace("default").Get(t.Context(), "my-wonderhoy-app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.GetAnnotations()[merge.LastAppliedAnnotation]; got != applied {
		t.Errorf("last-applied %q, want the concurrent apply's %q", got, applied)
	}
}

// The hand-over writes last-applied as its one Update owner, as kubectl
// apply's own manager when nobody owns it, and refuses when two do.
func TestHandoverManager(t *testing.T) {
	owning := func(manager, operation string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationType(operation), APIVersion: "apps/v1", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}`)}
	}
	tests := map[string]struct {
		entries []metav1.ManagedFieldsEntry
		want    string
		wantErr string
	}{
		"kubectl apply owns it":                    {entries: []metav1.ManagedFieldsEntry{owning("kubectl-client-side-apply", "Update")}, want: "kubectl-client-side-apply"},
		"Argo CD's client-side apply owns it":      {entries: []metav1.ManagedFieldsEntry{owning("argocd-controller", "Update")}, want: "argocd-controller"},
		"nobody owns it":                           {want: "kubectl-client-side-apply"},
		"a server-side applier owns it, no Update": {entries: []metav1.ManagedFieldsEntry{owning("kubectl", "Apply")}, want: "kubectl-client-side-apply"},
		"two own it": {
			entries: []metav1.ManagedFieldsEntry{owning("kubectl-client-side-apply", "Update"), owning("argocd-controller", "Update")},
			wantErr: "last-applied is owned by argocd-controller and kubectl-client-side-apply: a write as one would take it from the others",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}}}
			obj.SetAnnotations(map[string]string{merge.LastAppliedAnnotation: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"}}`})
			obj.SetManagedFields(tc.entries)
			got, err := handoverManager(obj)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one starting %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("manager %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
