package webhook

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gomodules.xyz/jsonpatch/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const lastAppliedPointer = "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"

// After a rollout undo the mutating handler rewrites last-applied, and only
// last-applied, to the manifest of the restored revision.
func TestMutatingRepairsLastAppliedAfterUndo(t *testing.T) {
	tests := map[string]struct {
		review string
		// want returns the expected repaired last-applied, decoded.
		want func(t *testing.T, old *unstructured.Unstructured, cluster *fakeCluster) map[string]any
	}{
		"StatefulSet: the annotation its ControllerRevision kept": {
			review: "statefulset-rollout-undo",
			want:   revisionLastApplied(1),
		},
		"DaemonSet: the annotation its ControllerRevision kept": {
			review: "daemonset-rollout-undo",
			want:   revisionLastApplied(1),
		},
		"Deployment: the old last-applied with the undo's change": {
			review: "deployment-rollout-undo",
			want: func(t *testing.T, old *unstructured.Unstructured, _ *fakeCluster) map[string]any {
				la := decodeJSON(t, lastApplied(old))
				containers := la["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
				containers[0].(map[string]any)["image"] = "nginx:1.14.2"
				return la
			},
		},
	}
	engine := newEngine(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := loadReview(t, tc.review)
			cluster := loadCluster(t, filepath.Join("testdata", "reviews", tc.review+".cluster.json"))
			resp := NewReviewer(engine, cluster).Mutating().Handle(t.Context(), req)
			if !resp.Allowed {
				t.Fatalf("mutating response denied: %v", resp.Result)
			}
			if len(resp.Patches) != 1 || resp.Patches[0].Path != lastAppliedPointer || resp.Patches[0].Operation != "replace" {
				t.Fatalf("patches = %v, want one replace of %s", resp.Patches, lastAppliedPointer)
			}
			old := &unstructured.Unstructured{}
			if err := old.UnmarshalJSON(req.OldObject.Raw); err != nil {
				t.Fatal(err)
			}
			got := decodeJSON(t, patchValue(t, resp.Patches[0]))
			if diff := cmp.Diff(tc.want(t, old, cluster), got); diff != "" {
				t.Errorf("repaired last-applied mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// revisionLastApplied expects the last-applied that ControllerRevision
// number n carries in its annotations.
func revisionLastApplied(n int64) func(*testing.T, *unstructured.Unstructured, *fakeCluster) map[string]any {
	return func(t *testing.T, _ *unstructured.Unstructured, cluster *fakeCluster) map[string]any {
		for _, o := range cluster.objects {
			if rev, _, _ := unstructured.NestedInt64(o.Object, "revision"); o.GetKind() == "ControllerRevision" && rev == n {
				return decodeJSON(t, lastApplied(o))
			}
		}
		t.Fatalf("no ControllerRevision %d in the snapshot", n)
		return nil
	}
}

func patchValue(t *testing.T, op jsonpatch.JsonPatchOperation) string {
	t.Helper()
	s, ok := op.Value.(string)
	if !ok {
		t.Fatalf("patch value is %T, want a string", op.Value)
	}
	return s
}

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("decoding %q: %v", s, err)
	}
	return m
}
