package merge

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// pausedByRollout returns obj with spec.paused true, owned by the
// managedFields entry of manager as `kubectl rollout pause` leaves it.
func pausedByRollout(t *testing.T, obj *unstructured.Unstructured, manager string) *unstructured.Unstructured {
	t.Helper()
	c := obj.DeepCopy()
	if err := unstructured.SetNestedField(c.Object, true, "spec", "paused"); err != nil {
		t.Fatal(err)
	}
	mfs := c.GetManagedFields()
	found := false
	for i := range mfs {
		if mfs[i].Manager != manager {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(mfs[i].FieldsV1.GetRawBytes(), &fields); err != nil {
			t.Fatal(err)
		}
		spec, _ := fields["f:spec"].(map[string]any)
		if spec == nil {
			spec = map[string]any{}
			fields["f:spec"] = spec
		}
		spec["f:paused"] = map[string]any{}
		raw, err := json.Marshal(fields)
		if err != nil {
			t.Fatal(err)
		}
		mfs[i].FieldsV1 = metav1.NewFieldsV1(string(raw))
		found = true
	}
	if !found {
		t.Fatalf("no managedFields entry of %s", manager)
	}
	c.SetManagedFields(mfs)
	return c
}

// spec.paused set by `kubectl rollout pause` is a pause, not an orphan:
// the documented way to batch changes is pause, apply (manifests without
// paused), resume. Removing it would resume the rollout half-way. The
// restartedAt annotation of the same fixtures stays an orphan.
func TestPausedIsNoOrphan(t *testing.T) {
	t.Run("client-side apply", func(t *testing.T) {
		f := loadFixture(t, "seed003-restarted-at")
		live := pausedByRollout(t, f.live, "kubectl-rollout")
		_, an, err := NewAnalyzer().predictApply(live, f.modified)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{restartedAt}, paths(an.Orphans)); diff != "" {
			t.Errorf("orphans (-want +got):\n%s", diff)
		}
		ex, err := NewAnalyzer().Explain(live)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{restartedAt}, paths(ex.Analysis.Orphans)); diff != "" {
			t.Errorf("explain's orphans (-want +got):\n%s", diff)
		}
	})
	t.Run("server-side apply", func(t *testing.T) {
		old := pausedByRollout(t, readObject(t, "ssa-restarted-at", "old.yaml"), "kubectl-rollout")
		new := pausedByRollout(t, readObject(t, "ssa-restarted-at", "new.yaml"), "kubectl-rollout")
		an, err := NewAnalyzer().AnalyzeServerSideApply(old, new, "kubectl")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{restartedAt}, paths(an.Orphans)); diff != "" {
			t.Errorf("orphans (-want +got):\n%s", diff)
		}
	})
}
