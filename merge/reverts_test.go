package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The webhook sees the apply of a manifest whose pod-template annotations
// are null as the stored result: restartedAt is gone, removed by the
// apply itself (the manifest's null deletes the whole map), not by an
// admission webhook. It is a revert, naming who set it.
func TestClientSideApplyThatNullsAMapRevertsWhatAPersonSet(t *testing.T) {
	f := loadFixture(t, "null-template-annotations")
	result := f.expected.DeepCopy()
	setLastApplied(t, result, f.modified)
	an, err := NewAnalyzer().AnalyzeClientSideApply(f.live, result)
	if err != nil {
		t.Fatal(err)
	}
	want := []FieldFact{{
		Path: mustPath(t, "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]"),
		Live: "2026-11-01T10:00:00Z",
		Owners: []Owner{{Manager: "kubectl-rollout", Operation: "Update", APIVersion: "apps/v1",
			Time: fixtureTime}},
	}}
	if diff := cmp.Diff(want, an.Reverts, pathString); diff != "" {
		t.Errorf("reverts (-want +got):\n%s", diff)
	}
}
