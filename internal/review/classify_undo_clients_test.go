package review

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Field sets of the managedFields entries below.
const (
	appliedFields = `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{"f:replicas":{}}}`
	imageFields   = `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`
	// appliedImageFields is appliedFields with the image.
	appliedImageFields = `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{"f:replicas":{},` +
		`"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`
)

// newerManifest is manifest after its image moved to nginx:2: what
// last-applied still says after a rollout undo back to nginx:1.
var newerManifest = strings.Replace(manifest, "nginx:1", "nginx:2", 1)

// entry is an Update entry of manager on the object itself, owning fields,
// written at second s of 2026-11-27T02:00.
func entry(manager, fields string, s int) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1",
		Time: &metav1.Time{Time: time.Date(2026, 11, 27, 2, 0, s, 0, time.UTC)}, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

// withEntries is obj with managedFields entries.
func withEntries(obj *unstructured.Unstructured, entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	obj.SetManagedFields(entries)
	return obj
}

// `oc rollout undo` is kubectl's rollout undo built into OpenShift's CLI
// (openshift/oc pkg/cli/rollout wraps k8s.io/kubectl/pkg/cmd/rollout): it
// sends no field manager either, so the API server names the writer after
// oc's user agent, "oc" ("oc.exe" on Windows). When the restored template
// matches no revision exactly (here: no revisions at all), the undo is
// unconfirmed: warned about, never denied as an imperative edit.
func TestUnconfirmedUndoByOtherKubectlBuildsIsNoImperativeEdit(t *testing.T) {
	tests := map[string]struct {
		old, new *unstructured.Unstructured
	}{
		"oc rollout undo, whose entry is new": {
			old: withEntries(deployment(t, "nginx:2", newerManifest), entry(merge.ClientSideApplyManager, appliedImageFields, 0)),
			new: withEntries(deployment(t, "nginx:1", newerManifest), entry(merge.ClientSideApplyManager, appliedFields, 0), entry("oc", imageFields, 30)),
		},
		"oc.exe rollout undo on Windows": {
			old: withEntries(deployment(t, "nginx:2", newerManifest), entry(merge.ClientSideApplyManager, appliedImageFields, 0)),
			new: withEntries(deployment(t, "nginx:1", newerManifest), entry(merge.ClientSideApplyManager, appliedFields, 0), entry("oc.exe", imageFields, 30)),
		},
		// A kubectl binary named after its version (kubectl.1.32), kept
		// beside others, names the write after itself (adversarial
		// review: denied as an imperative edit when a mutating webhook
		// stamped the restored template).
		"kubectl.1.32 rollout undo": {
			old: withEntries(deployment(t, "nginx:2", newerManifest), entry(merge.ClientSideApplyManager, appliedImageFields, 0)),
			new: withEntries(deployment(t, "nginx:1", newerManifest), entry(merge.ClientSideApplyManager, appliedFields, 0), entry("kubectl.1.32", imageFields, 30)),
		},
		// An earlier oc rollout undo's entry already owns the image, with
		// kubectl apply's: the only entry that changes is the applier's.
		"oc rollout undo under the applier's entry": {
			old: withEntries(deployment(t, "nginx:2", newerManifest), entry(merge.ClientSideApplyManager, appliedImageFields, 5), entry("oc", imageFields, 1)),
			new: withEntries(deployment(t, "nginx:1", newerManifest), entry(merge.ClientSideApplyManager, appliedFields, 5), entry("oc", imageFields, 1)),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.new.SetResourceVersion("8")
			wantUndoNotDenied(t, tc.old, tc.new)
		})
	}
}

// A tool that is no build of kubectl and sends no field manager (k9s's
// set image) changing the pod template alone stays an imperative edit:
// only kubectl's own rollout undo code writes without a field manager
// under kubectl's and oc's names.
func TestTemplateEditByOtherToolIsImperative(t *testing.T) {
	old := withEntries(deployment(t, "nginx:2", newerManifest), entry(merge.ClientSideApplyManager, appliedImageFields, 0))
	new := withEntries(deployment(t, "nginx:1", newerManifest), entry(merge.ClientSideApplyManager, appliedFields, 0), entry("k9s", imageFields, 30))
	new.SetResourceVersion("8")
	r := NewReviewer(nil, engine(t, policy.Config{}), cluster{})
	rv, err := r.ReviewUpdate(t.Context(), Update{User: authenticationv1.UserInfo{Username: "alice"}, Old: old, New: new}, Validate)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(policy.Imperative, rv.Classification()); diff != "" {
		t.Errorf("classification (-want +got):\n%s", diff)
	}
}

// kubectl's entry without field manager is not only a rollout undo's:
// kubectl apply set-last-applied writes under it too, and an undo's stays
// after the undo. A later write by another client without field manager
// names its own manager in the entry the API server gave it (new, or with
// the write's time), so it is no undo, whatever entries kubectl left (the
// Python client's patch of an image that last-applied owns was warned
// about as "looks like a rollout undo" instead of reviewed as the edit it
// is; a controller's added env var got the same warning).
func TestTemplateWriteByAnotherClientBesideKubectlsEntryIsNoUndo(t *testing.T) {
	tests := map[string]classifyCase{
		"the Python client's patch of the image after kubectl apply set-last-applied": {
			old:  fixture(t, "template-write-after-set-last-applied", "old"),
			new:  fixture(t, "template-write-after-set-last-applied", "new"),
			want: classified{Class: policy.Imperative, Paths: []string{"spec.template.spec.containers[name=nginx].image"}},
		},
		"a controller's env var after kubectl rollout undo": {
			old:  fixture(t, "template-write-after-undo", "old"),
			new:  fixture(t, "template-write-after-undo", "new"),
			want: classified{Class: policy.Imperative, Paths: []string{}},
		},
	}
	checkClassified(t, tests)
}
