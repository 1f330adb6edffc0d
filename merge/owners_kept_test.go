package merge

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// OwnersKeptButTheWriters lets the writer's own entry take the write's
// time and nothing else: a new owner, a dropped one, or another entry's
// new time is a change of owners (finding 27: kubectl rollout undo's
// entry, manager kubectl, owns a mesh's stamp and set-last-applied writes
// under it).
func TestOwnersKeptButTheWriters(t *testing.T) {
	const stamp = "mesh.example.com/injected-revision"
	const owns = `{"f:metadata":{"f:annotations":{"f:` + stamp + `":{}}}}`
	entry := func(manager, fields string, s int) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
			Time: &metav1.Time{Time: time.Date(2026, 11, 27, 2, 0, s, 0, time.UTC)}, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
	}
	object := func(v string, entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "web", "namespace": "shop"}}}
		if v != "" {
			obj.SetAnnotations(map[string]string{stamp: v})
		}
		obj.SetManagedFields(entries)
		return obj
	}
	old := object("1", entry("kubectl", owns, 10), entry("other", `{"f:data":{}}`, 20))
	tests := map[string]struct {
		new  *unstructured.Unstructured
		want bool
	}{
		"the owner's entry with the write's time": {
			new: object("2", entry("kubectl", owns, 30), entry("other", `{"f:data":{}}`, 20)), want: true,
		},
		"the owner's entry untouched": {
			new: object("2", entry("kubectl", owns, 10), entry("other", `{"f:data":{}}`, 30)), want: true,
		},
		"a new owner beside it": {
			new: object("2", entry("kubectl", owns, 10), entry("other", owns, 30)),
		},
		"another manager took it over": {
			new: object("2", entry("kubectl-edit", owns, 30), entry("other", `{"f:data":{}}`, 20)),
		},
		"an owner's time that is not the write's": {
			new: object("2", entry("kubectl", owns, 15), entry("other", `{"f:data":{}}`, 30)),
		},
		"removed": {
			new: object("", entry("kubectl", `{}`, 30), entry("other", `{"f:data":{}}`, 20)),
		},
		"no managedFields": {
			new: object("2"),
		},
	}
	p, err := ParsePath("metadata.annotations[" + stamp + "]")
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := OwnersKeptButTheWriters(old, tc.new, p)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("OwnersKeptButTheWriters = %v, want %v", got, tc.want)
			}
		})
	}
}
