package merge

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// An undo that brings back a list element writes no sub-value of it that a
// manifest is not proven to have: not the env var `kubectl set env` added,
// not the server's defaults (see testdata/undo-deployment-sidecar).
func TestUndoRepairOfARestoredElement(t *testing.T) {
	const dir = "undo-deployment-sidecar"
	v2 := func(t *testing.T) map[string]any {
		return lastAppliedOf(t, readObject(t, dir, "removed-before.yaml"))
	}
	tests := map[string]struct {
		old, new, revisions string
		// edit changes the objects of the fixture.
		edit      func(t *testing.T, old, new *unstructured.Unstructured, revs []*unstructured.Unstructured)
		want      func(t *testing.T) map[string]any
		wantStale bool
	}{
		"an undo of an undo keeps the sidecar last-applied has as it is, without DEBUG and the defaults": {
			old: "undone-before.yaml", new: "undone-live.yaml", revisions: "undone-revisions.yaml",
			want: func(t *testing.T) map[string]any {
				return lastAppliedOf(t, readObject(t, dir, "undone-before.yaml"))
			},
		},
		"a sidecar that the adjacent apply removed comes back as its name alone": {
			old: "removed-before.yaml", new: "removed-live.yaml", revisions: "removed-revisions.yaml",
			want: func(t *testing.T) map[string]any {
				la := v2(t)
				container(la)["image"] = "nginx:1.14.2"
				spec := la["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
				spec["containers"] = append(spec["containers"].([]any), map[string]any{"name": "sidecar"})
				return la
			},
			wantStale: true,
		},
		"a replaced ReplicaSet created 15s after the apply (a pause folded other writes into it) proves no removal": {
			old: "removed-before.yaml", new: "removed-live.yaml", revisions: "removed-revisions.yaml",
			edit: func(_ *testing.T, _, _ *unstructured.Unstructured, revs []*unstructured.Unstructured) {
				revs[2].SetCreationTimestamp(metav1.Date(2026, 11, 22, 2, 23, 5, 0, time.UTC))
			},
			want: func(t *testing.T) map[string]any {
				la := v2(t)
				container(la)["image"] = "nginx:1.14.2"
				return la
			},
			wantStale: true,
		},
		"a restartedAt that the restored revision has and the adjacent apply's lacks (the orphan remedy removed it in a pause) is not written": {
			old: "removed-before.yaml", new: "removed-live.yaml", revisions: "removed-revisions.yaml",
			edit: func(t *testing.T, _, new *unstructured.Unstructured, revs []*unstructured.Unstructured) {
				for _, obj := range []*unstructured.Unstructured{new, revs[1]} {
					mustSet(t, obj, "2026-11-22T02:22:48Z", "spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt")
				}
			},
			want: func(t *testing.T) map[string]any {
				la := v2(t)
				container(la)["image"] = "nginx:1.14.2"
				spec := la["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
				spec["containers"] = append(spec["containers"].([]any), map[string]any{"name": "sidecar"})
				return la
			},
			wantStale: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old, new, revs := readObject(t, dir, tc.old), readObject(t, dir, tc.new), readObjects(t, dir, tc.revisions)
			if tc.edit != nil {
				tc.edit(t, old, new, revs)
			}
			rb, err := NewAnalyzer().DetectRollback(old, new, revs)
			if err != nil || rb == nil {
				t.Fatalf("DetectRollback = %v, %v; want an undo", rb, err)
			}
			if diff := cmp.Diff(tc.want(t), decodeLA(t, rb.RepairedLastApplied)); diff != "" {
				t.Errorf("repaired last-applied (-want +got):\n%s", diff)
			}
			if rb.StaleLastApplied != tc.wantStale {
				t.Errorf("StaleLastApplied = %v, want %v", rb.StaleLastApplied, tc.wantStale)
			}
		})
	}
}
