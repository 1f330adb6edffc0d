package review

import (
	"github.com/apply-hygiene/apply-hygiene/merge"

	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// dsManifest is the last-applied of the DaemonSet below: kubectl apply's.
const dsManifest = `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"web","namespace":"shop"},` +
	`"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:2"}]}}}}`

// daemonSet is DaemonSet shop/web as stored, applied from dsManifest,
// with image and the template generation annotation the API server keeps
// (deprecated.daemonset.template.generation).
func daemonSet(t *testing.T, image, generation string) *unstructured.Unstructured {
	t.Helper()
	obj := deployment(t, image, dsManifest)
	obj.SetKind("DaemonSet")
	unstructured.RemoveNestedField(obj.Object, "spec", "replicas")
	obj.SetAnnotations(map[string]string{lastAppliedAnnotation: dsManifest, merge.DaemonSetGenerationAnnotation: generation})
	return obj
}

// kubectl rollout undo of a DaemonSet patches spec.template alone, with
// no field manager (k8s.io/kubectl/pkg/polymorphichelpers/rollback.go,
// DaemonSetRollbacker), and the API server bumps the template generation
// annotation in the same write, before the validating webhook sees it
// (the DaemonSet registry's PrepareForUpdate). When the restored template
// matches no ControllerRevision exactly (a revision written before an
// upgrade added a default the server now fills in, or a webhook that
// stamps templates), the undo is unconfirmed: it must be warned about,
// never denied as an imperative edit of the person rolling back.
func TestUnconfirmedDaemonSetUndoIsNoImperativeEdit(t *testing.T) {
	old := daemonSet(t, "nginx:2", "2")
	new := daemonSet(t, "nginx:1", "3")
	new.SetResourceVersion("8")
	new.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1",
		Time: &metav1.Time{Time: time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC)}, FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:image":{}}}}}}}`)}})
	wantUndoNotDenied(t, old, new)
}

// The same for a StatefulSet behind a webhook that stamps an annotation
// on every write (a mesh injector), after the API server tracked the
// write's fields: the stamp is nobody's change, and the undo, unconfirmed
// (the webhook may stamp the template too), must not be denied.
func TestUnconfirmedUndoBehindStampingWebhookIsNoImperativeEdit(t *testing.T) {
	statefulSet := func(image, stamp string, second int) *unstructured.Unstructured {
		obj := daemonSet(t, image, "")
		obj.SetKind("StatefulSet")
		la := strings.Replace(dsManifest, "DaemonSet", "StatefulSet", 1)
		obj.SetAnnotations(map[string]string{lastAppliedAnnotation: la, stampKey: stamp})
		obj.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1",
			Time: &metav1.Time{Time: time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)}, FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}`)},
			{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1",
				Time: &metav1.Time{Time: time.Date(2026, 11, 27, 2, 0, second, 0, time.UTC)}, FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:image":{}}}}}}}`)}})
		return obj
	}
	old, new := statefulSet("nginx:2", "1", 0), statefulSet("nginx:1", "2", 9)
	new.SetResourceVersion("8")
	wantUndoNotDenied(t, old, new)
}

// wantUndoNotDenied reviews alice's write from old to new in the
// validating pass and fails unless it is a rollout undo that no rule
// denies.
func wantUndoNotDenied(t *testing.T, old, new *unstructured.Unstructured) {
	t.Helper()
	r := NewReviewer(nil, engine(t, policy.Config{}), cluster{})
	rv, err := r.ReviewUpdate(t.Context(), Update{User: authenticationv1.UserInfo{Username: "alice"}, Old: old, New: new}, Validate)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(policy.RolloutUndo, rv.Classification()); diff != "" {
		t.Errorf("classification (-want +got):\n%s", diff)
	}
	if denials := rv.DecisionsWith(policy.ActionDeny); len(denials) > 0 {
		t.Errorf("the rollback was denied: %v", denials)
	}
}
