package review

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// meshStamp is the annotation a mesh injector's mutating webhook stamps,
// with a new value, on every write, after the API server tracked the
// write's fields.
const meshStamp = "mesh.example.com/injected-revision"

// Field sets of the managedFields entries of restampedDeployment.
const (
	// applierFields: kubectl apply's entry once kubectl edit took
	// last-applied from it and rollout undo the image: the empty
	// annotations map it once wrote and the replicas.
	applierFields = `{"f:metadata":{"f:annotations":{}},"f:spec":{"f:replicas":{}}}`
	// undoFields: kubectl rollout undo's entry (manager kubectl), which
	// copied the revision's stamp and restored the image.
	undoFields = `{"f:metadata":{"f:annotations":{"f:` + meshStamp + `":{}}},` +
		`"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:image":{}}}}}}}`
	// undoLastAppliedFields: the same entry once it wrote last-applied
	// too (set-last-applied, or kubectl ≤1.17's apply under the manager
	// kubectl).
	undoLastAppliedFields = `{"f:metadata":{"f:annotations":{"f:` + meshStamp + `":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},` +
		`"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:image":{}}}}}}}`
	// editLastAppliedFields: kubectl edit --save-config's entry.
	editLastAppliedFields = `{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}`
)

// manifestStamped is manifest with the stamp v in its annotations, as
// kubectl edit --save-config records the object it sent, or as a manifest
// that sets the stamp itself does; manifest when v is "".
func manifestStamped(v string) string {
	if v == "" {
		return manifest
	}
	return strings.Replace(manifest, `"name":"web","namespace":"shop"}`,
		`"annotations":{"`+meshStamp+`":"`+v+`"},"name":"web","namespace":"shop"}`, 1)
}

// restampedDeployment is the Deployment of manifest with last-applied la,
// the stamp v and managedFields entries.
func restampedDeployment(t *testing.T, la, v string, entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	t.Helper()
	obj := deployment(t, "nginx:1", la)
	obj.SetAnnotations(map[string]string{lastAppliedAnnotation: la, meshStamp: v})
	return withEntries(obj, entries...)
}

// A write that changes last-applied alone behind a mesh injector that
// stamps every write is a hand-over even when the writer's own entry owns
// the stamp: kubectl rollout undo (manager kubectl) copied it from the
// revision, and kubectl apply set-last-applied writes under the same
// manager, so that entry gets the write's time. Its new last-applied does
// not hold the new stamp: no writer that records last-applied changes an
// annotation to a value other than the one it records (soak, finding 27:
// set-last-applied drew [apply-reverts-drift] … removes
// metadata.annotations[mesh.example.com/injected-revision]).
func TestClassifyLastAppliedAloneBesideTheStampsOwner(t *testing.T) {
	// After kubectl apply, rollout undo and kubectl edit --save-config,
	// which recorded the stamp r1 it sent; the webhook stamped r2.
	saved := restampedDeployment(t, manifestStamped("r1"), "r2",
		entry(merge.ClientSideApplyManager, applierFields, 0), entry("kubectl", undoFields, 10), entry("kubectl-edit", editLastAppliedFields, 20))
	// kubectl ≤1.17 applied a manifest setting the stamp r1 under the
	// manager kubectl, after undo.
	oldApplied := restampedDeployment(t, manifestStamped("r1"), "r1", entry("kubectl", undoLastAppliedFields, 10))
	tests := map[string]struct {
		manager  string
		old, new *unstructured.Unstructured
		want     policy.Classification
	}{
		"set-last-applied of a manifest without the stamp, which the webhook re-stamps, is a save-config": {
			old:  saved,
			new:  restampedDeployment(t, manifest, "r3", entry(merge.ClientSideApplyManager, applierFields, 0), entry("kubectl", undoLastAppliedFields, 30)),
			want: policy.SaveConfig,
		},
		"set-last-applied that the webhook does not re-stamp is a save-config": {
			old:  saved,
			new:  restampedDeployment(t, manifest, "r2", entry(merge.ClientSideApplyManager, applierFields, 0), entry("kubectl", undoLastAppliedFields, 30)),
			want: policy.SaveConfig,
		},
		"kubectl ≤1.17 apply under the manager kubectl that changes the stamp to its manifest's is an apply": {
			old:  oldApplied,
			new:  restampedDeployment(t, manifestStamped("r5"), "r5", entry("kubectl", undoLastAppliedFields, 30)),
			want: policy.ClientSideApply,
		},
		"kubectl ≤1.17 apply under the manager kubectl that removes the stamp is an apply": {
			old:  oldApplied,
			new:  withEntries(deployment(t, "nginx:1", manifest), entry("kubectl", appliedImageFields, 30)),
			want: policy.ClientSideApply,
		},
		"kubectl apply under its own manager that changes the stamp to its manifest's is an apply": {
			manager: merge.ClientSideApplyManager,
			old:     restampedDeployment(t, manifestStamped("r1"), "r1", entry(merge.ClientSideApplyManager, undoLastAppliedFields, 10)),
			new:     restampedDeployment(t, manifestStamped("r5"), "r5", entry(merge.ClientSideApplyManager, undoLastAppliedFields, 30)),
			want:    policy.ClientSideApply,
		},
		"a client's write (curl) of last-applied and the stamp it owns, both to one value, is an apply": {
			old:  restampedDeployment(t, manifestStamped("r1"), "r1", entry("curl", undoLastAppliedFields, 10)),
			new:  restampedDeployment(t, manifestStamped("r5"), "r5", entry("curl", undoLastAppliedFields, 30)),
			want: policy.ClientSideApply,
		},
		"kubectl edit of last-applied and the stamp, both to one value, is an edit": {
			manager: "kubectl-edit",
			old:     restampedDeployment(t, manifestStamped("r1"), "r1", entry("kubectl-edit", undoLastAppliedFields, 10)),
			new:     restampedDeployment(t, manifestStamped("r5"), "r5", entry("kubectl-edit", undoLastAppliedFields, 30)),
			want:    policy.Imperative,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w := newWrite("", tc.manager, authenticationv1.UserInfo{Username: "alice"}, tc.old, tc.new)
			if diff := cmp.Diff(tc.want, classify(w)); diff != "" {
				t.Errorf("classify (-want +got):\n%s", diff)
			}
		})
	}
}

// The same set-last-applied reviewed with the product's rules: no
// finding, [apply-reverts-drift] least of all; only orphaned-field's
// record of the stamp it took out of last-applied, which the mutating
// pass writes.
func TestSetLastAppliedBesideTheStampsOwnerDecidesNothing(t *testing.T) {
	old := restampedDeployment(t, manifestStamped("r1"), "r2",
		entry(merge.ClientSideApplyManager, applierFields, 0), entry("kubectl", undoFields, 10), entry("kubectl-edit", editLastAppliedFields, 20))
	new := restampedDeployment(t, manifest, "r3", entry(merge.ClientSideApplyManager, applierFields, 0), entry("kubectl", undoLastAppliedFields, 30))
	r := NewReviewer(nil, engine(t, policy.Config{}), cluster{})
	rv, err := r.ReviewUpdate(t.Context(), Update{User: authenticationv1.UserInfo{Username: "alice"}, Old: old, New: new}, Validate)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(policy.SaveConfig, rv.Classification()); diff != "" {
		t.Errorf("classification (-want +got):\n%s", diff)
	}
	var got []string
	for _, d := range rv.Decisions {
		patch, err := json.Marshal(d.Patch)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s %v %s", d.Rule, d.Action, d.Paths, patch))
	}
	want := []string{`orphaned-field repair [metadata.annotations[apply-hygiene.io/handed-over]] [{"op":"add","path":"/metadata/annotations/apply-hygiene.io~1handed-over","value":"[\"metadata.annotations[mesh.example.com/injected-revision]\"]"}]`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
}
