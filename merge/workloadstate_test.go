package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// patchedBy returns obj with the field at fields set to v by a `kubectl
// patch` under manager: the value changes and the field's ownership moves
// from every other entry to a new Update entry of manager, as the API
// server records it.
func patchedBy(t *testing.T, obj *unstructured.Unstructured, manager string, v any, fields ...string) *unstructured.Unstructured {
	t.Helper()
	c := obj.DeepCopy()
	mustSet(t, c, v, fields...)
	fp := []string{"fieldsV1"}
	for _, f := range fields {
		fp = append(fp, "f:"+f)
	}
	entries, _, err := unstructured.NestedSlice(c.Object, "metadata", "managedFields")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		unstructured.RemoveNestedField(e.(map[string]any), fp...)
	}
	set := map[string]any{"apiVersion": c.GetAPIVersion(), "fieldsType": "FieldsV1", "manager": manager, "operation": "Update", "time": "2026-11-22T03:00:00Z"}
	mustSet(t, &unstructured.Unstructured{Object: set}, map[string]any{}, fp...)
	mustSet(t, c, append(entries, set), "metadata", "managedFields")
	return c
}

// A StatefulSet's partition that `kubectl patch` set for a staged
// rollout is the workload's state, not an orphan: removing it (the
// orphan's command, or prune) would roll the rest of the pods mid-canary.
// Neither the apply of a manifest that sets the rolling update's
// maxUnavailable nor explain reports it; the seed's TO_BE_DELETED, which
// the undo brought back, stays an orphan.
func TestPartitionIsNoOrphan(t *testing.T) {
	seedOrphans := []string{"spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]"}
	f := loadFixture(t, "seed004-undo")
	strategy := map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": int64(1)}}
	mustSet(t, f.modified, strategy, "spec", "updateStrategy")
	editLastApplied(t, f.live, func(la map[string]any) {
		la["spec"].(map[string]any)["updateStrategy"] = map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": 1.0}}
	})
	live := patchedBy(t, f.live, "kubectl-patch", int64(2), "spec", "updateStrategy", "rollingUpdate", "partition")
	_, an, err := NewAnalyzer().predictApply(live, f.modified)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(seedOrphans, paths(an.Orphans)); diff != "" {
		t.Errorf("orphans (-want +got):\n%s", diff)
	}
	ex, err := NewAnalyzer().Explain(live)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(seedOrphans, paths(ex.Analysis.Orphans)); diff != "" {
		t.Errorf("explain's orphans (-want +got):\n%s", diff)
	}
}

// A person who switched an OnDelete StatefulSet to a staged rolling
// update owns the whole updateStrategy: the struct is not one orphan
// whose removal would take the partition with it.
func TestStrategyHoldingAPartitionIsNoOrphan(t *testing.T) {
	f := loadFixture(t, "seed004-undo")
	strategy := map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": int64(1), "partition": int64(2)}}
	live := patchedBy(t, f.live, "kubectl-patch", strategy, "spec", "updateStrategy")
	_, an, err := NewAnalyzer().predictApply(live, f.modified)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]"}, paths(an.Orphans)); diff != "" {
		t.Errorf("orphans (-want +got):\n%s", diff)
	}
}

// A custom resource's /scale subresource may keep its count elsewhere than
// spec.replicas (a CRD's specReplicasPath: .spec.size). What kubectl scale
// wrote there is the workload's state as spec.replicas is: a manifest that
// leaves it out hands it to kubectl scale or an autoscaler, and removing
// it (the orphan's command, or prune) would reset the count. Neither the
// apply nor explain reports it; the entry of the /scale write says which
// field it is.
func TestScaledCountIsNoOrphan(t *testing.T) {
	f := loadFixture(t, "scaled-widget-size")
	_, an, err := NewAnalyzer().predictApply(f.live, f.modified)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(nil), paths(an.Orphans)); diff != "" {
		t.Errorf("orphans of the apply (-want +got):\n%s", diff)
	}
	ex, err := NewAnalyzer().Explain(f.live)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(nil), paths(ex.Analysis.Orphans)); diff != "" {
		t.Errorf("orphans of explain (-want +got):\n%s", diff)
	}
}
