package merge

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// Another mutating webhook that stamps the pod template on every write
// changes its annotation within the apply request itself: the field is
// admission's, not a person's, even when a rollout undo (manager kubectl)
// last restored it. It is no orphan. The same field left as it was is one.
func TestFieldChangedWithinTheApplyIsNoOrphan(t *testing.T) {
	f := loadFixture(t, "seed003-restarted-at")
	stamp := mustPath(t, "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]")
	result := f.expected.DeepCopy()
	result.SetManagedFields(f.live.GetManagedFields())
	setLastApplied(t, result, f.modified)
	an, err := NewAnalyzer().AnalyzeClientSideApply(f.live, result)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{stamp.String()}, paths(an.Orphans)); diff != "" {
		t.Fatalf("orphans of the unchanged field (-want +got):\n%s", diff)
	}
	annotations := result.Object["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["annotations"].(map[string]any)
	annotations["kubectl.kubernetes.io/restartedAt"] = "stamped again by a webhook"
	an, err = NewAnalyzer().AnalyzeClientSideApply(f.live, result)
	if err != nil {
		t.Fatal(err)
	}
	if len(an.Orphans) != 0 {
		t.Errorf("orphans %v, want none: admission changed the field within the apply", paths(an.Orphans))
	}
}

// A manifest that drops replicas after kubectl scale resets them: the
// replicas-reset fact says so, and no revert repeats it for the same field.
func TestReplicasResetIsNotAlsoARevert(t *testing.T) {
	f := loadFixture(t, "seed001-set-image-reverted")
	applied := f.modified.DeepCopy()
	if err := unstructured.SetNestedField(applied.Object, int64(2), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	live := applied.DeepCopy()
	setLastApplied(t, live, applied)
	if err := unstructured.SetNestedField(live.Object, int64(5), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	withOwner(t, live, "kubectl", `{"f:spec":{"f:replicas":{}}}`)
	_, an, err := NewAnalyzer().predictApply(live, f.modified)
	if err != nil {
		t.Fatal(err)
	}
	if an.ReplicasReset == nil {
		t.Fatal("no replicas reset")
	}
	// The result is predicted here, without the API server: it gets the
	// server's default of a Deployment's replicas, as the webhook sees it.
	if got := an.ReplicasReset.Result; got != int64(1) {
		t.Errorf("replicas reset result %v (%T), want the server's default 1", got, got)
	}
	for _, r := range an.Reverts {
		if r.Path.String() == "spec.replicas" {
			t.Errorf("spec.replicas is a revert too: %+v", r)
		}
	}
}

// A value that another tool applied server-side (an Apply entry, such as
// kubectl apply --server-side --field-manager=deploy-bot --force-conflicts
// from a client that keeps last-applied) differs from last-applied: the
// client-side apply that puts the manifest's value back reverts it (issue
// 25: every Apply entry counted as an applier, so it was silent). kubectl's
// own server-side apply, whose last-applied the API server keeps in step,
// is not another tool.
func TestClientSideApplyRevertsWhatAnotherToolAppliedServerSide(t *testing.T) {
	tests := map[string]struct {
		manager string
		want    []string
	}{
		"another tool":                    {manager: "deploy-bot", want: []string{"spec.replicas"}},
		"kubectl's own server-side apply": {manager: "kubectl"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, "seed001-set-image-reverted")
			manifest := f.modified.DeepCopy()
			if err := unstructured.SetNestedField(manifest.Object, int64(2), "spec", "replicas"); err != nil {
				t.Fatal(err)
			}
			live := manifest.DeepCopy()
			setLastApplied(t, live, manifest)
			if err := unstructured.SetNestedField(live.Object, int64(5), "spec", "replicas"); err != nil {
				t.Fatal(err)
			}
			meta := live.Object["metadata"].(map[string]any)
			meta["managedFields"] = []any{map[string]any{"manager": tc.manager, "operation": "Apply", "apiVersion": "apps/v1",
				"time": fixtureTime.Format(time.RFC3339), "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}}}}
			_, an, err := NewAnalyzer().predictApply(live, manifest)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, paths(an.Reverts)); diff != "" {
				t.Errorf("reverts (-want +got):\n%s", diff)
			}
		})
	}
}

// An apply to an object without last-applied (Flux removed it) that puts
// back a label a person changed with kubectl label reverts it. The
// objects are a real API server's: kubectl-client-side-apply still owns
// the labels map as an empty leaf (f:labels: {}) after kubectl label took
// its one key, which owns the map as it was written, not the key (generative
// seed 60334, sequence 005).
func TestApplyWithoutLastAppliedRevertsWhatAPersonSet(t *testing.T) {
	read := func(name string) *unstructured.Unstructured {
		return readStoredJSON(t, "revert-label-without-last-applied", name)
	}
	an, err := NewAnalyzer().AnalyzeClientSideApply(read("old.json"), read("new.json"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"metadata.labels[app.kubernetes.io/name]"}, paths(an.Reverts)); diff != "" {
		t.Errorf("reverts (-want +got):\n%s", diff)
	}
}

// An apply whose manifest drops a map that the previous last-applied had
// (kubectl edit --save-config recorded the labels) deletes the map whole:
// a label a person added since with kubectl label goes with it, and that
// is a revert (generative seed 287868, sequence 003).
func TestApplyThatDropsAMapRevertsWhatAPersonAddedInIt(t *testing.T) {
	read := func(name string) *unstructured.Unstructured {
		return readStoredJSON(t, "revert-label-in-dropped-map", name)
	}
	an, err := NewAnalyzer().AnalyzeClientSideApply(read("old.json"), read("new.json"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"metadata.labels.label-7"}, paths(an.Reverts)); diff != "" {
		t.Errorf("reverts (-want +got):\n%s", diff)
	}
}

// readStoredJSON reads testdata/dir/name, an object as a real API server
// stored it, decoded as JSON (integers stay int64).
func readStoredJSON(t *testing.T, dir, name string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", dir, name))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return u
}

// An apply that sets serviceAccountName back reverts the name, not also
// its deprecated alias serviceAccount: the API server copies the name into
// the alias on every write, so the alias's change is the name's, reported
// there (a second warning said the apply "removes" the alias, which it set
// to the name; generative seed 281126, sequence 025).
func TestApplyRevertsAServiceAccountAtItsName(t *testing.T) {
	read := func(name string) *unstructured.Unstructured {
		return readStoredJSON(t, "revert-serviceaccount-mirror", name)
	}
	an, err := NewAnalyzer().AnalyzeClientSideApply(read("old.json"), read("new.json"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"spec.template.spec.serviceAccountName"}, paths(an.Reverts)); diff != "" {
		t.Errorf("reverts (-want +got):\n%s", diff)
	}
}
