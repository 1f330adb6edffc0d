package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestRevertRefused: a person's change of a claim's storage request that
// the next kubectl apply of last-applied would shrink is still an
// imperative change, and RevertRefused says that the API server refuses
// that shrink (fixture pvc-storage-expanded), so the message cannot say
// the apply puts the old size back. Only a shrink the API server refuses
// on every version is marked.
func TestRevertRefused(t *testing.T) {
	storage := "spec.resources.requests.storage"
	tests := map[string]struct {
		// apiVersion replaces the claim's when set.
		apiVersion string
		// lastApplied, old and new are the storage requests of the
		// manifest, the claim before the write and after it; capacity is
		// its status.capacity.storage, "" for none.
		lastApplied, old, new, capacity string
		refused                         bool
	}{
		"kubectl patch expanding a bound claim cannot be shrunk back by the next apply": {
			lastApplied: "1Gi", old: "1Gi", new: "2Gi", capacity: "1Gi", refused: true,
		},
		"a second expansion once the volume grew cannot be shrunk back either": {
			lastApplied: "1Gi", old: "2Gi", new: "3Gi", capacity: "2Gi", refused: true,
		},
		"quantities are compared by amount, not by text": {
			lastApplied: "1024Mi", old: "1Gi", new: "2Gi", capacity: "1Gi", refused: true,
		},
		"a decrease in live, were it to reach us, is put back by a growth": {
			lastApplied: "2Gi", old: "2Gi", new: "1Gi", capacity: "2Gi",
		},
		// RecoverVolumeExpansionFailure (GA and locked since 1.34) lets a
		// request go down to more than status.capacity.
		"an expansion over a failed one may go back to last-applied above the capacity": {
			lastApplied: "3Gi", old: "3Gi", new: "4Gi", capacity: "2Gi",
		},
		"without a capacity nothing proves the refusal": {
			lastApplied: "1Gi", old: "1Gi", new: "2Gi",
		},
		"a custom resource of kind PersistentVolumeClaim is no claim of the API server's": {
			apiVersion: "storage.example.com/v1", lastApplied: "1Gi", old: "1Gi", new: "2Gi", capacity: "1Gi",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, "pvc-storage-expanded")
			manifest, old := f.original.DeepCopy(), f.live.DeepCopy()
			if tc.apiVersion != "" {
				manifest.SetAPIVersion(tc.apiVersion)
				old.SetAPIVersion(tc.apiVersion)
			}
			setStorage(t, manifest.Object, tc.lastApplied, "spec", "resources", "requests", "storage")
			setStorage(t, old.Object, tc.old, "spec", "resources", "requests", "storage")
			setStorage(t, old.Object, tc.capacity, "status", "capacity", "storage")
			setLastApplied(t, old, manifest)
			new := old.DeepCopy()
			setStorage(t, new.Object, tc.new, "spec", "resources", "requests", "storage")
			an, err := NewAnalyzer().AnalyzeUpdate(old, new)
			if err != nil {
				t.Fatal(err)
			}
			want := []FieldFact{{Path: mustPath(t, storage), Live: tc.old, Result: tc.new, LastApplied: tc.lastApplied, RevertRefused: tc.refused}}
			if diff := cmp.Diff(want, an.ImperativeChanges, pathString); diff != "" {
				t.Errorf("imperative changes (-want +got):\n%s", diff)
			}
			// The audit reads the stored claim after the write: its drift
			// says the same (imperative-edit's audit message).
			live, err := NewAnalyzer().AnalyzeLive(new)
			if err != nil {
				t.Fatal(err)
			}
			refused := map[string]bool{}
			for _, f := range live.Drift {
				refused[f.Path.String()] = f.RevertRefused
			}
			if got, ok := refused[storage]; tc.lastApplied != tc.new && (!ok || got != tc.refused) {
				t.Errorf("the stored claim's drift at %s: revertRefused %v (reported %v), want %v", storage, got, ok, tc.refused)
			}
		})
	}
}

// setStorage sets the field at fields of obj to quantity, or removes it
// when quantity is "".
func setStorage(t *testing.T, obj map[string]any, quantity string, fields ...string) {
	t.Helper()
	if quantity == "" {
		unstructured.RemoveNestedField(obj, fields...)
		return
	}
	if err := unstructured.SetNestedField(obj, quantity, fields...); err != nil {
		t.Fatal(err)
	}
}
