package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestStaleRollback: seed 004's StatefulSet after kubectl rollout undo
// --to-revision=1 carries the last-applied of revision 2; the stored object
// alone, with its ControllerRevisions, tells the undo and its repair.
func TestStaleRollback(t *testing.T) {
	revs := readObjects(t, "seed004-undo", "revisions.yaml")
	v1LA, _ := LastAppliedValue(readObject(t, "seed004-undo", "v1.yaml"))
	tests := map[string]struct {
		live      *unstructured.Unstructured
		revisions []*unstructured.Unstructured
		want      *Rollback
	}{
		"the undone StatefulSet has a stale last-applied that revision 1 repairs": {
			live:      readObject(t, "seed004-undo", "live.yaml"),
			revisions: revs,
			want: &Rollback{RevisionKind: "ControllerRevision", RevisionName: "my-wonderhoy-app-946448b85", Revision: 1,
				Confirmed: true, StaleLastApplied: true, RepairSource: "controllerRevision", RepairedLastApplied: v1LA,
				LastAppliedUpdaters: []string{"kubectl-client-side-apply"}},
		},
		"the Update owners of last-applied come sorted, for the audit's repair to name the one it writes as": {
			live:      withLastAppliedOwner(t, readObject(t, "seed004-undo", "live.yaml"), "a-tool"),
			revisions: revs,
			want: &Rollback{RevisionKind: "ControllerRevision", RevisionName: "my-wonderhoy-app-946448b85", Revision: 1,
				Confirmed: true, StaleLastApplied: true, RepairSource: "controllerRevision", RepairedLastApplied: v1LA,
				LastAppliedUpdaters: []string{"a-tool", "kubectl-client-side-apply"}},
		},
		"before the undo last-applied describes the live template": {
			live:      readObject(t, "seed004-undo", "before-undo.yaml"),
			revisions: revs,
		},
		"without revisions nothing is proven": {
			live: readObject(t, "seed004-undo", "live.yaml"),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := NewAnalyzer()
			got, err := a.StaleRollback(tc.live, tc.revisions)
			if err != nil {
				t.Fatal(err)
			}
			if got != nil {
				got.Changes = nil
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("StaleRollback (-want +got):\n%s", diff)
			}
		})
	}
}

// withLastAppliedOwner returns obj with one more managedFields entry, an
// Update by manager that owns the last-applied annotation only.
func withLastAppliedOwner(t *testing.T, obj *unstructured.Unstructured, manager string) *unstructured.Unstructured {
	t.Helper()
	out := obj.DeepCopy()
	mfs := out.GetManagedFields()
	mfs = append(mfs, metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1",
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}`)})
	out.SetManagedFields(mfs)
	return out
}

// An orphan of a stored object that kubectl rollout undo's entry owns
// says so (RestoredByUndo): seed 004's TO_BE_DELETED came back with
// revision 1's template; had kubectl edit written it, it would not be.
func TestAnalyzeLiveMarksOrphansTheUndoRestored(t *testing.T) {
	tests := map[string]struct {
		seed string
		// edit renames the undo's entry to kubectl edit's.
		edit bool
		want map[string]bool
	}{
		"seed 004 after the undo": {seed: "seed004-undo",
			want: map[string]bool{"spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]": true}},
		"seed 004 had kubectl edit restored the field": {seed: "seed004-undo", edit: true,
			want: map[string]bool{"spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]": false}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			live := readObject(t, tc.seed, "live.yaml")
			if tc.edit {
				mfs := live.GetManagedFields()
				for i := range mfs {
					if mfs[i].Manager == "kubectl" {
						mfs[i].Manager = "kubectl-edit"
					}
				}
				live.SetManagedFields(mfs)
			}
			an, err := NewAnalyzer().AnalyzeLive(live)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, o := range an.Orphans {
				got[o.Path.String()] = o.RestoredByUndo
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("orphans restored by the undo (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMayHaveStaleLastApplied(t *testing.T) {
	tests := map[string]struct {
		file string
		want bool
	}{
		"an undone StatefulSet whose template drifted from last-applied": {file: "live.yaml", want: true},
		"a StatefulSet as last applied":                                  {file: "before-undo.yaml", want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			live := readObject(t, "seed004-undo", tc.file)
			an, err := NewAnalyzer().AnalyzeLive(live)
			if err != nil {
				t.Fatal(err)
			}
			if got := MayHaveStaleLastApplied(live, an); got != tc.want {
				t.Errorf("MayHaveStaleLastApplied = %v, want %v", got, tc.want)
			}
		})
	}
}
