package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestManifestReplicas(t *testing.T) {
	withLastApplied := func(lastApplied string) func(*unstructured.Unstructured) {
		return func(obj *unstructured.Unstructured) {
			obj.SetManagedFields(nil)
			obj.SetAnnotations(map[string]string{LastAppliedAnnotation: lastApplied})
		}
	}
	const sets = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"deployment-apply-server-side-after-restart"},"spec":{"replicas":3}}`
	const drops = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"deployment-apply-server-side-after-restart"},"spec":{}}`
	tests := map[string]struct {
		edit       func(*unstructured.Unstructured)
		manager    string
		serverSide bool
		want       any
		wantSet    bool
	}{
		"a client-side manifest with replicas":    {edit: withLastApplied(sets), want: float64(3), wantSet: true},
		"a client-side manifest without replicas": {edit: withLastApplied(drops)},
		// The live count is never the manifest's: only last-applied says
		// what the manifest had.
		"a client-side apply without last-applied": {edit: func(obj *unstructured.Unstructured) { obj.SetAnnotations(nil) }},
		"a last-applied that is not JSON":          {edit: withLastApplied("{")},
		// Values are decoded JSON (YAML for the fixture): numbers are float64.
		"a server-side configuration with replicas": {manager: "kubectl", serverSide: true, want: float64(3), wantSet: true},
		"another manager's apply":                   {manager: "kustomize-controller", serverSide: true},
		"a server-side configuration without replicas": {
			manager: "kubectl", serverSide: true,
			edit: func(obj *unstructured.Unstructured) {
				mfs := obj.GetManagedFields()
				for i := range mfs {
					if mfs[i].Operation == "Apply" {
						mfs[i].FieldsV1 = metav1.NewFieldsV1(`{"f:spec":{"f:minReadySeconds":{}}}`)
					}
				}
				obj.SetManagedFields(mfs)
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := readObject(t, "ssa-restarted-at", "new.yaml")
			if tc.edit != nil {
				tc.edit(obj)
			}
			got, set, err := ManifestReplicas(obj, tc.manager, tc.serverSide)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]any{tc.want, tc.wantSet}, []any{got, set}); diff != "" {
				t.Errorf("ManifestReplicas (-want +got):\n%s", diff)
			}
		})
	}
}
