package merge

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// An undo repair changes last-applied only where the undo restored
// something (spec.template; a Deployment's annotations from its
// ReplicaSet) and only where it proves the restored value came from a
// manifest: never at a field a tool or a person set outside apply, and
// never outside what the undo restored (minReadySeconds, replicas).
func TestUndoRepairScope(t *testing.T) {
	twinLA := func(t *testing.T) map[string]any {
		return lastAppliedOf(t, readObject(t, "undo-deployment-twin", "before-undo.yaml"))
	}
	restartsLA := func(t *testing.T) map[string]any {
		return lastAppliedOf(t, readObject(t, "undo-deployment-restarts", "before-undo.yaml"))
	}
	tests := map[string]struct {
		dir, old, new, revisions string
		// edit changes the objects of the fixture before the test.
		edit func(t *testing.T, old, new *unstructured.Unstructured)
		// want is the repaired last-applied, decoded.
		want      func(t *testing.T) map[string]any
		wantStale bool
	}{
		"a StatefulSet undo takes the template from the revision and keeps minReadySeconds and replicas of the newer manifest": {
			dir: "seed004-undo", old: "before-undo.yaml", new: "live.yaml", revisions: "revisions.yaml",
			edit: func(t *testing.T, old, new *unstructured.Unstructured) {
				for _, obj := range []*unstructured.Unstructured{old, new} {
					editLastApplied(t, obj, func(la map[string]any) {
						la["spec"].(map[string]any)["minReadySeconds"] = 10.0
						la["spec"].(map[string]any)["replicas"] = 5.0
					})
					mustSet(t, obj, int64(10), "spec", "minReadySeconds")
					mustSet(t, obj, int64(5), "spec", "replicas")
				}
			},
			want: func(t *testing.T) map[string]any {
				la := lastAppliedOf(t, readObject(t, "seed004-undo", "v1.yaml"))
				la["spec"].(map[string]any)["minReadySeconds"] = 10.0
				la["spec"].(map[string]any)["replicas"] = 5.0
				return la
			},
			wantStale: true,
		},
		"a Deployment undo after two restarts leaves restartedAt, which kubectl-rollout stamped, out of last-applied": {
			dir: "undo-deployment-restarts", old: "before-undo.yaml", new: "live.yaml", revisions: "revisions.yaml",
			want: restartsLA,
		},
		"a second undo that adds restartedAt back proves nothing about it": {
			dir: "undo-deployment-restarts", old: "readded-before.yaml", new: "live.yaml", revisions: "readded-revisions.yaml",
			want: restartsLA,
		},
		"seed 004's Deployment twin gets the image and annotation that the v2 apply changed and the name of the env var it deleted": {
			dir: "undo-deployment-twin", old: "before-undo.yaml", new: "live.yaml", revisions: "revisions.yaml",
			want: func(t *testing.T) map[string]any {
				la := twinLA(t)
				la["metadata"].(map[string]any)["annotations"] = map[string]any{"team": "a"}
				c := container(la)
				c["image"] = "nginx:1.14.2"
				c["env"] = []any{map[string]any{"name": "TO_BE_DELETED"}, map[string]any{"name": "ANOTHER_ENV", "value": "who cares?"}}
				return la
			},
			wantStale: true,
		},
		// The restored revision's manifest has a fieldRef without the
		// apiVersion the API server defaults inside it (an atomic value):
		// it still describes the template (soak seed 271126, sequence
		// 172: no repair, and the next write under kubectl apply's name
		// was told it set back kubectl edit --save-config's image).
		"a DaemonSet undo after kubectl edit --save-config takes the image from the restored revision's manifest": {
			dir: "daemonset-undo-saved-config", old: "before-undo.yaml", new: "live.yaml", revisions: "revisions.yaml",
			want: func(t *testing.T) map[string]any {
				la := lastAppliedOf(t, readObject(t, "daemonset-undo-saved-config", "before-undo.yaml"))
				container(la)["image"] = "registry.example/manifest:10"
				return la
			},
			wantStale: true,
		},
		"an image that kubectl set changed before the undo is not copied, and the env var it restores is not proven": {
			dir: "undo-deployment-twin", old: "before-undo.yaml", new: "live.yaml", revisions: "revisions.yaml",
			edit: func(t *testing.T, old, _ *unstructured.Unstructured) {
				moveImageTo(t, old, "kubectl-set")
			},
			want: func(t *testing.T) map[string]any {
				la := twinLA(t)
				la["metadata"].(map[string]any)["annotations"] = map[string]any{"team": "a"}
				return la
			},
			wantStale: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old, new := readObject(t, tc.dir, tc.old), readObject(t, tc.dir, tc.new)
			if tc.edit != nil {
				tc.edit(t, old, new)
			}
			rb, err := NewAnalyzer().DetectRollback(old, new, readObjects(t, tc.dir, tc.revisions))
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

// The audit finds the same repair in the stored object after the undo as
// the webhook in the undo itself: from the revisions alone.
func TestStaleRollbackScope(t *testing.T) {
	tests := map[string]struct {
		dir, live, revisions string
		edit                 func(t *testing.T, live *unstructured.Unstructured, revs []*unstructured.Unstructured)
		want                 func(t *testing.T) map[string]any
	}{
		"a StatefulSet keeps minReadySeconds and replicas of the newer manifest": {
			dir: "seed004-undo", live: "live.yaml", revisions: "revisions.yaml",
			edit: func(t *testing.T, live *unstructured.Unstructured, _ []*unstructured.Unstructured) {
				editLastApplied(t, live, func(la map[string]any) {
					la["spec"].(map[string]any)["minReadySeconds"] = 10.0
					la["spec"].(map[string]any)["replicas"] = 5.0
				})
				mustSet(t, live, int64(10), "spec", "minReadySeconds")
				mustSet(t, live, int64(5), "spec", "replicas")
			},
			want: func(t *testing.T) map[string]any {
				la := lastAppliedOf(t, readObject(t, "seed004-undo", "v1.yaml"))
				la["spec"].(map[string]any)["minReadySeconds"] = 10.0
				la["spec"].(map[string]any)["replicas"] = 5.0
				return la
			},
		},
		"seed 004's Deployment twin after the controller renumbered the restored ReplicaSet": {
			dir: "undo-deployment-twin", live: "live.yaml", revisions: "revisions.yaml",
			edit: func(_ *testing.T, _ *unstructured.Unstructured, revs []*unstructured.Unstructured) {
				annots := revs[0].GetAnnotations()
				annots[deploymentRevisionAnnotation], annots[revisionHistoryAnnotation] = "3", "1"
				revs[0].SetAnnotations(annots)
			},
			want: func(t *testing.T) map[string]any {
				la := lastAppliedOf(t, readObject(t, "undo-deployment-twin", "live.yaml"))
				c := container(la)
				c["image"] = "nginx:1.14.2"
				c["env"] = []any{map[string]any{"name": "TO_BE_DELETED"}, map[string]any{"name": "ANOTHER_ENV", "value": "who cares?"}}
				return la
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			live, revs := readObject(t, tc.dir, tc.live), readObjects(t, tc.dir, tc.revisions)
			tc.edit(t, live, revs)
			rb, err := NewAnalyzer().StaleRollback(live, revs)
			if err != nil || rb == nil {
				t.Fatalf("StaleRollback = %v, %v; want a stale last-applied", rb, err)
			}
			if diff := cmp.Diff(tc.want(t), decodeLA(t, rb.RepairedLastApplied)); diff != "" {
				t.Errorf("repaired last-applied (-want +got):\n%s", diff)
			}
		})
	}
}

func lastAppliedOf(t *testing.T, obj *unstructured.Unstructured) map[string]any {
	t.Helper()
	raw := obj.GetAnnotations()[LastAppliedAnnotation]
	if raw == "" {
		var err error
		if raw, err = LastAppliedValue(obj); err != nil {
			t.Fatal(err)
		}
	}
	return decodeLA(t, raw)
}

func editLastApplied(t *testing.T, obj *unstructured.Unstructured, edit func(map[string]any)) {
	t.Helper()
	la := lastAppliedOf(t, obj)
	edit(la)
	raw, err := json.Marshal(la)
	if err != nil {
		t.Fatal(err)
	}
	annots := obj.GetAnnotations()
	annots[LastAppliedAnnotation] = string(raw) + "\n"
	obj.SetAnnotations(annots)
}

func mustSet(t *testing.T, obj *unstructured.Unstructured, v any, fields ...string) {
	t.Helper()
	if err := unstructured.SetNestedField(obj.Object, v, fields...); err != nil {
		t.Fatal(err)
	}
}

// container is the first container of a decoded last-applied.
func container(la map[string]any) map[string]any {
	spec := la["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	return spec["containers"].([]any)[0].(map[string]any)
}

// moveImageTo makes manager, not kubectl-client-side-apply, the owner of
// the first container's image, with the value it has.
func moveImageTo(t *testing.T, obj *unstructured.Unstructured, manager string) {
	t.Helper()
	entries, _, err := unstructured.NestedSlice(obj.Object, "metadata", "managedFields")
	if err != nil {
		t.Fatal(err)
	}
	image := []string{"fieldsV1", "f:spec", "f:template", "f:spec", "f:containers", `k:{"name":"nginx"}`, "f:image"}
	for _, e := range entries {
		if e := e.(map[string]any); e["manager"] == ClientSideApplyManager {
			unstructured.RemoveNestedField(e, image...)
		}
	}
	set := map[string]any{"apiVersion": "apps/v1", "fieldsType": "FieldsV1", "manager": manager, "operation": "Update", "time": "2026-11-22T02:22:52Z"}
	mustSet(t, &unstructured.Unstructured{Object: set}, map[string]any{}, image...)
	mustSet(t, obj, append(entries, set), "metadata", "managedFields")
}
