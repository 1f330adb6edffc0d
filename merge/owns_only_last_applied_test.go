package merge

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestOwnsOnlyLastApplied(t *testing.T) {
	const (
		la     = `"f:kubectl.kubernetes.io/last-applied-configuration":{}`
		record = `"f:apply-hygiene.io/handed-over":{}`
	)
	entry := func(manager, fields, subresource string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1",
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields), Subresource: subresource}
	}
	cases := []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    bool
	}{
		{"kubectl apply edit-last-applied --field-manager=ci-deployer", []metav1.ManagedFieldsEntry{entry("ci-deployer", `{"f:metadata":{"f:annotations":{`+la+`}}}`, "")}, true},
		{"and the record its hand-over added", []metav1.ManagedFieldsEntry{entry("ci-deployer", `{"f:metadata":{"f:annotations":{`+la+`,`+record+`}}}`, "")}, true},
		{"a client-side applier under that name", []metav1.ManagedFieldsEntry{entry("ci-deployer", `{"f:metadata":{"f:annotations":{`+la+`}},"f:spec":{"f:replicas":{}}}`, "")}, false},
		{"its status entry does not count", []metav1.ManagedFieldsEntry{entry("ci-deployer", `{"f:metadata":{"f:annotations":{`+la+`}}}`, ""), entry("ci-deployer", `{"f:status":{"f:replicas":{}}}`, "status")}, true},
		{"another manager's entry", []metav1.ManagedFieldsEntry{entry("helm", `{"f:metadata":{"f:annotations":{`+la+`}}}`, "")}, false},
		{"no entries", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}}}
			obj.SetManagedFields(tc.entries)
			if got := OwnsOnlyLastApplied(obj, "ci-deployer"); got != tc.want {
				t.Errorf("OwnsOnlyLastApplied = %v, want %v", got, tc.want)
			}
		})
	}
}
