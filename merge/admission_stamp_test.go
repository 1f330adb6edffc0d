package merge

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A field that a mutating webhook changed after the API server tracked
// the write's fields (a mesh injector stamping every write) is owned by
// no managedFields entry: it is not the write's imperative change, even
// where last-applied records it (kubectl edit --save-config recorded the
// stamp). A field the writer changed is its manager's, and stays one.
func TestAnalyzeUpdateBehindStampingWebhook(t *testing.T) {
	const stamp = "mesh.example.com/injected-revision"
	stamped := func(value, manager, owned string) *unstructured.Unstructured {
		f := loadFixture(t, "seed001-set-image-reverted")
		obj := f.modified.DeepCopy()
		annotations := obj.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[stamp] = "1"
		obj.SetAnnotations(annotations)
		setLastApplied(t, obj, obj.DeepCopy())
		annotations = obj.GetAnnotations()
		annotations[stamp] = value
		obj.SetAnnotations(annotations)
		obj.SetManagedFields([]metav1.ManagedFieldsEntry{
			{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{}}}`)},
			{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(owned)},
		})
		return obj
	}
	annotation := "metadata.annotations[" + stamp + "]"
	tests := map[string]struct {
		new  *unstructured.Unstructured
		want []string
	}{
		"the webhook's stamp on kubectl set env's write is nobody's": {
			new: stamped("2", "kubectl-set", `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{"f:env":{}}}}}}}`),
		},
		"kubectl annotate --overwrite of the stamp is the person's": {
			new:  stamped("2", "kubectl-annotate", `{"f:metadata":{"f:annotations":{"f:`+stamp+`":{}}}}`),
			want: []string{annotation},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old := stamped("1", "kubectl-client-side-apply", `{}`)
			an, err := NewAnalyzer().AnalyzeUpdate(old, tc.new)
			if err != nil {
				t.Fatal(err)
			}
			got := paths(an.ImperativeChanges)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("imperative changes (-want +got):\n%s", diff)
			}
		})
	}
}

// A write within the second of the previous one by the same manager leaves
// that manager's entry with the same time: the change is still the
// writer's (kubectl set image --field-manager=kubectl-client-side-apply
// right after kubectl apply, test/e2e/webhook), not a mutating webhook's.
func TestAnalyzeUpdateSameSecondWriterKeepsItsChange(t *testing.T) {
	f := loadFixture(t, "seed001-set-image-reverted")
	at := &metav1.Time{Time: time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC)}
	owned := func(obj *unstructured.Unstructured) *unstructured.Unstructured {
		obj = obj.DeepCopy()
		setLastApplied(t, obj, f.modified)
		obj.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate,
			Time: at, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{"f:image":{}}}}}}}`)}})
		return obj
	}
	old := owned(f.modified)
	edited := owned(f.modified)
	containers, _, _ := unstructured.NestedSlice(edited.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["image"] = "nginx:1.99"
	if err := unstructured.SetNestedSlice(edited.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	an, err := NewAnalyzer().AnalyzeUpdate(old, edited)
	if err != nil {
		t.Fatal(err)
	}
	got := paths(an.ImperativeChanges)
	if diff := cmp.Diff([]string{"spec.template.spec.containers[name=nginx].image"}, got); diff != "" {
		t.Errorf("imperative changes (-want +got):\n%s", diff)
	}
}

// An entry left with only the empty annotations map it once wrote owns
// none of its keys: the stamp that a mesh injector re-stamped in kubectl
// edit --save-config's write is still the injector's change (soak seed
// 271126, sequence 008: the edit was denied as an imperative edit).
func TestChangedByAdmissionBesideAnEmptyAnnotationsEntry(t *testing.T) {
	const dir = "stamped-annotation-save-config-after-apply"
	p, err := ParsePath("metadata.annotations[mesh.example.com/injected-revision]")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ChangedByAdmission(readObject(t, dir, "old.yaml"), readObject(t, dir, "new.yaml"), p)
	if err != nil {
		t.Fatal(err)
	}
	if !got {
		t.Error("ChangedByAdmission = false, want true: the injector re-stamped it")
	}
}
