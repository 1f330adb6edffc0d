package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// After the mutating pass repaired an undo's last-applied, a mutating
// webhook called after it may change the restored template (a policy
// engine that labels every pod template). The undo is still recognized by
// that repair: new's last-applied is exactly what DetectRollback repairs
// for one revision's template, and once repaired it is no longer stale.
// A last-applied that is not that repair proves nothing.
func TestRepairedRollback(t *testing.T) {
	tests := map[string]struct {
		dir, old, new, revisions string
		// lastApplied changes the repaired last-applied that new carries;
		// nil keeps it.
		lastApplied func(t *testing.T, obj *unstructured.Unstructured)
		// want is the rollback, nil for none; Changes are not compared,
		// and RepairedLastApplied is the mutating pass's repair.
		want *Rollback
	}{
		"a DaemonSet undo repaired from its ControllerRevision's manifest": {
			dir: "daemonset-undo-saved-config", old: "before-undo.yaml", new: "live.yaml", revisions: "revisions.yaml",
			want: &Rollback{RevisionKind: "ControllerRevision", RevisionName: "node-exporter-786cfbf6b4", Revision: 1, Confirmed: true, RepairSource: "controllerRevision"},
		},
		"a StatefulSet undo (seed 004)": {
			dir: "seed004-undo", old: "before-undo.yaml", new: "live.yaml", revisions: "revisions.yaml",
			want: &Rollback{RevisionKind: "ControllerRevision", RevisionName: "my-wonderhoy-app-946448b85", Revision: 1, Confirmed: true, RepairSource: "controllerRevision"},
		},
		"a Deployment undo (seed 004's twin)": {
			dir: "undo-deployment-twin", old: "before-undo.yaml", new: "live.yaml", revisions: "revisions.yaml",
			want: &Rollback{RevisionKind: "ReplicaSet", RevisionName: "web-7d4b9c8f5", Revision: 1, Confirmed: true, RepairSource: "rebuilt"},
		},
		"a last-applied that differs from the repair": {
			dir: "seed004-undo", old: "before-undo.yaml", new: "live.yaml", revisions: "revisions.yaml",
			lastApplied: func(t *testing.T, obj *unstructured.Unstructured) {
				editLastApplied(t, obj, func(la map[string]any) { la["spec"].(map[string]any)["minReadySeconds"] = 10.0 })
			},
		},
		"the last-applied of the object as stored": {
			dir: "seed004-undo", old: "before-undo.yaml", new: "live.yaml", revisions: "revisions.yaml",
			lastApplied: func(t *testing.T, obj *unstructured.Unstructured) {
				SetLastApplied(obj, readObject(t, "seed004-undo", "before-undo.yaml").GetAnnotations()[LastAppliedAnnotation])
			},
		},
	}
	a := NewAnalyzer()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old, new := readObject(t, tc.dir, tc.old), readObject(t, tc.dir, tc.new)
			SetLastApplied(new, old.GetAnnotations()[LastAppliedAnnotation])
			revisions := readObjects(t, tc.dir, tc.revisions)
			undo, err := a.DetectRollback(old, new, revisions)
			if err != nil || undo == nil || undo.RepairedLastApplied == "" {
				t.Fatalf("DetectRollback = %+v, %v; want a repair (the premise of this test)", undo, err)
			}
			// The mutating pass's repair, then the later webhook's label.
			SetLastApplied(new, undo.RepairedLastApplied)
			if tc.lastApplied != nil {
				tc.lastApplied(t, new)
			}
			mustSet(t, new, "web", "spec", "template", "metadata", "labels", "policy.example.com/team")
			if rb, err := a.DetectRollback(withLastAppliedValue(old, new.GetAnnotations()[LastAppliedAnnotation]), new, revisions); err != nil || rb != nil {
				t.Fatalf("DetectRollback of the labelled template = %+v, %v; want none (the premise of this test)", rb, err)
			}
			got, err := a.RepairedRollback(old, new, revisions)
			if err != nil {
				t.Fatal(err)
			}
			if got != nil {
				got.Changes = nil
			}
			var want *Rollback
			if tc.want != nil {
				w := *tc.want
				w.RepairedLastApplied = undo.RepairedLastApplied
				want = &w
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("RepairedRollback (-want +got):\n%s", diff)
			}
		})
	}
}
