package review

import (
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// undoneDeployment is a Deployment as stored with image and managedFields
// entries: kubectl apply's (owning the image when appliedImage) and kubectl
// rollout undo's (no field manager, owning the image), both of an earlier
// second than the write.
func undoneDeployment(t *testing.T, image string, appliedImage bool) *unstructured.Unstructured {
	t.Helper()
	const imageFields = `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`
	applied := `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{"f:replicas":{}}}`
	if appliedImage {
		applied = `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`
	}
	obj := object(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","uid":"u-1","resourceVersion":"7","generation":3,"creationTimestamp":"2026-11-26T10:00:00Z",`+
		`"managedFields":[`+
		`{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"apps/v1","time":"2026-11-26T10:00:05Z","fieldsType":"FieldsV1","fieldsV1":`+applied+`},`+
		`{"manager":"kubectl","operation":"Update","apiVersion":"apps/v1","time":"2026-11-26T10:00:01Z","fieldsType":"FieldsV1","fieldsV1":`+imageFields+`}]},`+
		`"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1"}]}}}}`)
	if err := unstructured.SetNestedSlice(obj.Object, []any{map[string]any{"name": "web", "image": image}}, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[lastAppliedAnnotation] = manifest
	obj.SetAnnotations(ann)
	return obj
}

// A rollout undo that restores fields kubectl's own (field-manager-less)
// entry already owns leaves that entry as it was: the only entry that
// changes is kubectl apply's, which loses the restored fields, so the
// write's effective manager is the applier's. It is no apply (kubectl
// apply always sends its manager) and no imperative edit: it stays an
// undo, which must pass (found by test/e2e/generative, seed 37: an undo
// denied as [imperative-edit] under kubectl-client-side-apply's name).
func TestUndoUnderTheAppliersEntryIsAnUndo(t *testing.T) {
	old := undoneDeployment(t, "nginx:2", true)
	new := undoneDeployment(t, "nginx:1", false)
	new.SetResourceVersion("8")
	w := newWrite("", "", authenticationv1.UserInfo{Username: "alice"}, old, new)
	if w.manager != merge.ClientSideApplyManager {
		t.Fatalf("effective manager %q, want %q (the premise of this test)", w.manager, merge.ClientSideApplyManager)
	}
	if got := classify(w); got == policy.ClientSideApply {
		t.Errorf("classify = %s, want no client-side apply for a write without field manager", got)
	}
	if !undoLike(w) {
		t.Error("undoLike = false, want true: kubectl without field manager has an entry and only the template changed")
	}
}
