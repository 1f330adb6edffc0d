package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A client-side apply of a manifest that, like its last-applied, leaves an
// annotation out never touches it: when the result holds another value
// that the write did not take over (its owners are live's), a mutating
// webhook changed it, not the apply, and it is no revert. Generative seed
// 37964, sequence 016: kubectl rollout undo copied the ReplicaSet's mesh
// stamp under the manager kubectl, and the next apply warned
// `[apply-reverts-drift] … removes metadata.annotations[…]` although the
// injector re-stamped it in the same write.
func TestAnalyzeClientSideApplyBehindStampingWebhook(t *testing.T) {
	const stamp = "mesh.example.com/injected-revision"
	annotation := "metadata.annotations[" + stamp + "]"
	object := func(value string, entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
		f := loadFixture(t, "seed001-set-image-reverted")
		obj := f.modified.DeepCopy()
		setLastApplied(t, obj, obj.DeepCopy())
		annotations := obj.GetAnnotations()
		annotations[stamp] = value
		obj.SetAnnotations(annotations)
		obj.SetManagedFields(entries)
		return obj
	}
	entry := func(manager, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
	}
	lastApplied := entry("kubectl-client-side-apply", `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}`)
	undone := entry("kubectl", `{"f:metadata":{"f:annotations":{"f:`+stamp+`":{}}}}`)
	tests := map[string]struct {
		result *unstructured.Unstructured
		want   []string
	}{
		"the injector's new stamp, still kubectl rollout undo's, is no revert": {
			result: object("7", lastApplied, undone),
		},
		"a value the apply's write took over is its revert": {
			result: object("7", entry("kubectl-client-side-apply", `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{},"f:`+stamp+`":{}}}}`)),
			want:   []string{annotation},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			live := object("6", lastApplied, undone)
			an, err := NewAnalyzer().AnalyzeClientSideApply(live, tc.result)
			if err != nil {
				t.Fatal(err)
			}
			got := paths(an.Reverts)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("reverts (-want +got):\n%s", diff)
			}
		})
	}
}

// The same behind an apply that adds last-applied to an object without
// one: kubectl apply's empty f:annotations of live owned the map as it
// was, not the stamp, so the apply's f:annotations of the result (".",
// last-applied) changes no owner of the stamp, and the injector's new value
// is no revert (generative seed 37964, sequence 016, step 18: the apply
// warned "this apply removes metadata.annotations[…]"). Argo CD's image is
// one.
func TestAnalyzeClientSideApplyAddingLastAppliedBehindStampingWebhook(t *testing.T) {
	const dir = "stamped-annotation-apply-without-last-applied"
	an, err := NewAnalyzer().AnalyzeClientSideApply(readObject(t, dir, "live.yaml"), readObject(t, dir, "result.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got := paths(an.Reverts)
	want := []string{"spec.template.spec.containers[name=minio].image"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reverts (-want +got):\n%s", diff)
	}
}

// A field that kubectl edit added after its own --save-config is a
// person's, though its entry owns last-applied: a saved config records the
// whole object (its uid included), so a field the record lacks was not in
// it. The apply keeps the label, and says so.
func TestAnalyzeClientSideApplyOrphanAddedAfterSavedConfig(t *testing.T) {
	const dir = "saved-config-then-edit-label"
	an, err := NewAnalyzer().AnalyzeClientSideApply(readObject(t, dir, "live.yaml"), readObject(t, dir, "result.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"metadata.labels[gen.example.com/k-15]"}
	if diff := cmp.Diff(want, paths(an.Orphans)); diff != "" {
		t.Errorf("orphans (-want +got):\n%s", diff)
	}
}
