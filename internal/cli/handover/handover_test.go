package handover

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

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
			got, err := fieldManager(obj)
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
