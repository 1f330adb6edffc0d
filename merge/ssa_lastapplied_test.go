package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A server-side apply by another manager that moves a field a client-side
// apply's last-applied owns away from it lists the field (issue 25:
// kubectl apply --server-side --field-manager=deploy-bot --force-conflicts
// of another image); not when the manager wrote last-applied itself, nor
// when only server-side appliers own last-applied (the object moved to
// server-side apply).
func TestServerSideApplyMovingAFieldLastAppliedOwns(t *testing.T) {
	const image = "spec.template.spec.containers[name=nginx].image"
	setOldOwner := func(manager string, op metav1.ManagedFieldsOperationType) func([]metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
		return func(mfs []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
			for i := range mfs {
				if mfs[i].Manager == ClientSideApplyManager {
					mfs[i].Manager, mfs[i].Operation = manager, op
				}
			}
			return mfs
		}
	}
	tests := map[string]struct {
		edit func([]metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry
		want []string
	}{
		"kubectl apply's last-applied":      {want: []string{image}},
		"the manager's own last-applied":    {edit: setOldOwner("ci-deployer", metav1.ManagedFieldsOperationUpdate)},
		"moved to server-side apply":        {edit: setOldOwner(LastAppliedManager, metav1.ManagedFieldsOperationApply)},
		"another client-side applier's too": {edit: setOldOwner("argocd-controller", metav1.ManagedFieldsOperationUpdate), want: []string{image}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old, new := readObject(t, "ssa-client-side-leftovers", "old.yaml"), readObject(t, "ssa-client-side-leftovers", "new.yaml")
			containers, _, _ := unstructured.NestedSlice(new.Object, "spec", "template", "spec", "containers")
			containers[0].(map[string]any)["image"] = "nginx:1.99"
			if err := unstructured.SetNestedSlice(new.Object, containers, "spec", "template", "spec", "containers"); err != nil {
				t.Fatal(err)
			}
			if tc.edit != nil {
				old.SetManagedFields(tc.edit(old.GetManagedFields()))
			}
			an, err := NewAnalyzer().AnalyzeServerSideApply(old, new, "ci-deployer")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, paths(an.ImperativeChanges)); diff != "" {
				t.Errorf("imperative changes (-want +got):\n%s", diff)
			}
		})
	}
}
