package merge

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestKubectlMade(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	update := func(manager string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Time: &created}
	}
	later := metav1.NewTime(created.Add(time.Hour))
	replacedLater := metav1.ManagedFieldsEntry{Manager: "kubectl-replace", Operation: metav1.ManagedFieldsOperationUpdate, Time: &later}
	statusApply := metav1.ManagedFieldsEntry{Manager: "my-operator", Operation: metav1.ManagedFieldsOperationApply, Subresource: "status"}
	apply := func(manager string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply}
	}
	cases := []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    bool
	}{
		{"kubectl create", []metav1.ManagedFieldsEntry{update("kubectl-create"), update("kube-controller-manager")}, true},
		{"kubectl run", []metav1.ManagedFieldsEntry{update("kubectl-run")}, true},
		{"kubectl expose", []metav1.ManagedFieldsEntry{update("kubectl-expose")}, true},
		{"kubectl replace --force (re-created)", []metav1.ManagedFieldsEntry{update("kubectl-replace")}, true},
		{"a Helm release replaced in place with kubectl replace", []metav1.ManagedFieldsEntry{update("helm"), replacedLater}, false},
		{"kubectl create, then an operator's server-side apply of its status", []metav1.ManagedFieldsEntry{update("kubectl-create"), statusApply}, true},
		{"applied, last-applied since removed by hand", []metav1.ManagedFieldsEntry{update("kubectl-client-side-apply"), update("kubectl-annotate")}, true},
		{"a Helm release touched by kubectl rollout restart, label and scale", []metav1.ManagedFieldsEntry{update("helm"), update("kubectl-rollout"), update("kubectl-label"), update("kubectl")}, false},
		{"an operator's object edited by a person", []metav1.ManagedFieldsEntry{update("my-operator"), update("kubectl-edit"), update("kubectl-patch")}, false},
		{"applied client-side, then taken over by Flux", []metav1.ManagedFieldsEntry{update("kubectl-client-side-apply"), apply("kustomize-controller"), update("kubectl-annotate")}, false},
		{"made by kubectl create, then applied server-side", []metav1.ManagedFieldsEntry{update("kubectl-create"), apply("kubectl")}, false},
		{"Helm 4", []metav1.ManagedFieldsEntry{apply("helm")}, false},
		{"no managedFields", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}}}
			obj.SetCreationTimestamp(created)
			obj.SetManagedFields(tc.entries)
			if got := KubectlMade(obj); got != tc.want {
				t.Errorf("KubectlMade = %v, want %v", got, tc.want)
			}
		})
	}
}
