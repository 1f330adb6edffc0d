package review

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// stampKey is the annotation a second mutating webhook (a mesh injector)
// stamps on every write that changes the object, after the API server
// tracked the write's fields: no managedFields entry owns it.
const stampKey = "stamp"

// stamped returns obj with the stamp annotation v (and last-applied la)
// and managedFields in which manager owns the fields of owned (fieldsV1
// JSON) and nobody owns the stamp.
func stamped(obj *unstructured.Unstructured, v, la, manager, owned string) *unstructured.Unstructured {
	obj = obj.DeepCopy()
	annotations := map[string]string{stampKey: v}
	if la != "" {
		annotations[lastAppliedAnnotation] = la
	}
	obj.SetAnnotations(annotations)
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`)},
		{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(owned)},
	})
	return obj
}

// A field that another mutating webhook changed after the API server
// tracked the write's fields is nobody's in managedFields: it is not the
// writer's change. kubectl edit --save-config behind such a webhook is
// still a save-config, and once last-applied recorded the stamp, a
// person's later write does not edit it (generative, mesh injector).
func TestClassifyBehindStampingWebhook(t *testing.T) {
	const imageOwned = `{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:image":{}}}}}}}`
	old := stamped(deployment(t, "nginx:1", ""), "1", manifest, "kubectl-client-side-apply", `{}`)
	// kubectl edit --save-config records the object it sends, stamp "1";
	// the webhook then stamps "2".
	sent := stamped(deployment(t, "nginx:2", ""), "1", "", "kubectl-edit", imageOwned)
	raw, err := json.Marshal(sent.Object)
	if err != nil {
		t.Fatal(err)
	}
	saved := string(raw)
	edited := stamped(deployment(t, "nginx:2", ""), "2", saved, "kubectl-edit", imageOwned)
	savedOld := stamped(deployment(t, "nginx:2", ""), "2", saved, "kubectl-edit", imageOwned)
	labelled := stamped(deployment(t, "nginx:2", ""), "3", saved, "kubectl-label", `{"f:metadata":{"f:labels":{"f:team":{}}}}`)
	labelled.SetLabels(map[string]string{"team": "a"})
	annotated := stamped(deployment(t, "nginx:2", ""), "3", saved, "kubectl-annotate", `{"f:metadata":{"f:annotations":{"f:stamp":{}}}}`)
	type want = classified
	tests := map[string]classifyCase{
		"kubectl edit --save-config behind the webhook is a save-config": {
			manager: "kubectl-edit", old: old, new: edited,
			want: want{policy.SaveConfig, []string{}},
		},
		"kubectl label behind the webhook edits no field last-applied owns": {
			manager: "kubectl-label", old: savedOld, new: labelled,
			want: want{policy.Imperative, []string{}},
		},
		"kubectl annotate --overwrite of the annotation is an edit of it": {
			manager: "kubectl-annotate", old: savedOld, new: annotated,
			want: want{policy.Imperative, []string{"metadata.annotations.stamp"}},
		},
	}
	checkClassified(t, tests)
}

// withUndoOwner returns obj with one more managedFields entry: kubectl
// rollout undo's (manager kubectl), which copied an earlier stamp and so
// owns it, at a fixed time.
func withUndoOwner(obj *unstructured.Unstructured) *unstructured.Unstructured {
	obj = obj.DeepCopy()
	entries := obj.GetManagedFields()
	entries = append(entries, metav1.ManagedFieldsEntry{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate,
		Time: &metav1.Time{Time: time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)}, FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:stamp":{}}}}`)})
	obj.SetManagedFields(entries)
	return obj
}

// The same after kubectl rollout undo copied an earlier stamp under the
// manager kubectl: the stamp is owned, by an entry that neither write
// touches (its time stays), so the webhook's new value is still nobody's
// change (generative seed 821794, sequence 007: kubectl edit
// --save-config was denied `[imperative-edit] … metadata.annotations[…]`,
// and so was every later write of a person).
func TestClassifyBehindStampingWebhookAfterUndo(t *testing.T) {
	const imageOwned = `{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:image":{}}}}}}}`
	now := &metav1.Time{Time: time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC)}
	withTime := func(obj *unstructured.Unstructured, manager string) *unstructured.Unstructured {
		entries := obj.GetManagedFields()
		for i := range entries {
			if entries[i].Manager == manager {
				entries[i].Time = now
			}
		}
		obj.SetManagedFields(entries)
		return obj
	}
	old := withUndoOwner(stamped(deployment(t, "nginx:1", ""), "1", manifest, "kubectl-client-side-apply", `{}`))
	sent := stamped(deployment(t, "nginx:2", ""), "1", "", "kubectl-edit", imageOwned)
	raw, err := json.Marshal(sent.Object)
	if err != nil {
		t.Fatal(err)
	}
	saved := string(raw)
	edited := withTime(withUndoOwner(stamped(deployment(t, "nginx:2", ""), "2", saved, "kubectl-edit", imageOwned)), "kubectl-edit")
	savedOld := withUndoOwner(stamped(deployment(t, "nginx:2", ""), "2", saved, "kubectl-edit", imageOwned))
	labelled := withTime(withUndoOwner(stamped(deployment(t, "nginx:2", ""), "3", saved, "kubectl-label", `{"f:metadata":{"f:labels":{"f:team":{}}}}`)), "kubectl-label")
	labelled.SetLabels(map[string]string{"team": "a"})
	annotated := stamped(deployment(t, "nginx:2", ""), "3", saved, "kubectl-annotate", `{"f:metadata":{"f:annotations":{"f:stamp":{}}}}`)
	annotated = withTime(annotated, "kubectl-annotate")
	type want = classified
	tests := map[string]classifyCase{
		"kubectl edit --save-config behind the webhook is a save-config": {
			manager: "kubectl-edit", old: old, new: edited,
			want: want{policy.SaveConfig, []string{}},
		},
		"kubectl label behind the webhook edits no field last-applied owns": {
			manager: "kubectl-label", old: savedOld, new: labelled,
			want: want{policy.Imperative, []string{}},
		},
		"kubectl annotate --overwrite of the annotation is an edit of it": {
			manager: "kubectl-annotate", old: savedOld, new: annotated,
			want: want{policy.Imperative, []string{"metadata.annotations.stamp"}},
		},
	}
	checkClassified(t, tests)
}

// kubectl edit --save-config behind a mesh injector, once kubectl edit had
// taken last-applied from kubectl apply's entry, which keeps only the
// empty annotations map it once wrote: a save-config (soak seed 271126,
// sequence 008, with the objects the webhook received; it was denied).
func TestClassifySaveConfigBesideAnEmptyAnnotationsEntry(t *testing.T) {
	const dir = "../../merge/testdata/stamped-annotation-save-config-after-apply/"
	read := func(name string) *unstructured.Unstructured {
		data, err := os.ReadFile(dir + name)
		if err != nil {
			t.Fatal(err)
		}
		return object(t, string(data))
	}
	old, new := read("old.yaml"), read("new.yaml")
	w := newWrite("", "kubectl-edit", authenticationv1.UserInfo{Username: "alice"}, old, new)
	if got, want := classify(w), policy.SaveConfig; got != want {
		t.Errorf("classify = %s, want %s", got, want)
	}
}
