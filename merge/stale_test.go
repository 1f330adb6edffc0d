package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
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
				Confirmed: true, StaleLastApplied: true, RepairSource: "controllerRevision", RepairedLastApplied: v1LA},
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
