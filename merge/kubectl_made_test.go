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
	helmRelease := map[string]string{"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "prod"}
	cases := []struct {
		name        string
		entries     []metav1.ManagedFieldsEntry
		annotations map[string]string
		want        bool
	}{
		{"kubectl create", []metav1.ManagedFieldsEntry{update("kubectl-create"), update("kube-controller-manager")}, nil, true},
		{"kubectl run", []metav1.ManagedFieldsEntry{update("kubectl-run")}, nil, true},
		{"kubectl expose", []metav1.ManagedFieldsEntry{update("kubectl-expose")}, nil, true},
		{"kubectl replace --force (re-created)", []metav1.ManagedFieldsEntry{update("kubectl-replace")}, nil, true},
		{"a Helm release replaced in place with kubectl replace", []metav1.ManagedFieldsEntry{update("helm"), replacedLater}, nil, false},
		{"kubectl create, then an operator's server-side apply of its status", []metav1.ManagedFieldsEntry{update("kubectl-create"), statusApply}, nil, true},
		{"applied, last-applied since removed by hand", []metav1.ManagedFieldsEntry{update("kubectl-client-side-apply"), update("kubectl-annotate")}, nil, true},
		{"a Helm release touched by kubectl rollout restart, label and scale", []metav1.ManagedFieldsEntry{update("helm"), update("kubectl-rollout"), update("kubectl-label"), update("kubectl")}, nil, false},
		{"an operator's object edited by a person", []metav1.ManagedFieldsEntry{update("my-operator"), update("kubectl-edit"), update("kubectl-patch")}, nil, false},
		{"applied client-side, then taken over by Flux", []metav1.ManagedFieldsEntry{update("kubectl-client-side-apply"), apply("kustomize-controller"), update("kubectl-annotate")}, nil, false},
		{"made by kubectl create, then applied server-side", []metav1.ManagedFieldsEntry{update("kubectl-create"), apply("kubectl")}, nil, false},
		{"Helm 4", []metav1.ManagedFieldsEntry{apply("helm")}, nil, false},
		{"no managedFields", nil, nil, false},
		{"kubectl create with a release-like annotation of its own", []metav1.ManagedFieldsEntry{update("kubectl-create"), update("kubectl-annotate")}, map[string]string{"meta.helm.sh/release-namespace": "prod"}, true},
		{"kubectl create, then adopted by a helm upgrade", []metav1.ManagedFieldsEntry{update("kubectl-create"), update("kubectl-annotate"), update("kubectl-label"), update("helm")}, helmRelease, false},
		{"kubectl create, then adopted by Helm with a chart that matches it (no helm entry)", []metav1.ManagedFieldsEntry{update("kubectl-create"), update("kubectl-annotate"), update("kubectl-label")}, helmRelease, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}}}
			obj.SetCreationTimestamp(created)
			obj.SetManagedFields(tc.entries)
			obj.SetAnnotations(tc.annotations)
			if got := KubectlMade(obj); got != tc.want {
				t.Errorf("KubectlMade = %v, want %v", got, tc.want)
			}
		})
	}
}
