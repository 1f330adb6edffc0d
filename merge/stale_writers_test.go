package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// staleVerdict is what TestStaleRollbackNeedsTheUndosManagedFields pins of
// a StaleRollback: the restored revision, where the repair came from and
// the image the repaired last-applied gives the container. The zero value
// is no stale last-applied.
type staleVerdict struct {
	RevisionKind  string
	Revision      int64
	RepairSource  string
	RepairedImage string
}

// An older pod template put back after a v2 apply is a stale last-applied
// only when managedFields prove that kubectl rollout undo wrote it: the
// restored fields are owned by kubectl's Update without field manager.
// kubectl edit and kubectl patch restoring the very same template
// (captured from a real API server, see merge/testdata/stale-writers) are
// hand edits: no rollback, nothing explained, no repair.
func TestStaleRollbackNeedsTheUndosManagedFields(t *testing.T) {
	undone := map[string]staleVerdict{
		"deployment":  {RevisionKind: "ReplicaSet", Revision: 3, RepairSource: "rebuilt", RepairedImage: "nginx:1.14.2"},
		"statefulset": {RevisionKind: "ControllerRevision", Revision: 3, RepairSource: "controllerRevision", RepairedImage: "nginx:latest"},
		"daemonset":   {RevisionKind: "ControllerRevision", Revision: 3, RepairSource: "controllerRevision", RepairedImage: "agent:1"},
	}
	type testCase struct {
		kind, writer string
		// edit changes the captured object before the call.
		edit func(t *testing.T, live *unstructured.Unstructured)
		want staleVerdict
	}
	tests := map[string]testCase{}
	for kind, want := range undone {
		tests[kind+": kubectl rollout undo (kubectl, Update) is an undo"] = testCase{kind: kind, writer: "undo", want: want}
		tests[kind+": kubectl edit restoring the same template is a hand edit"] = testCase{kind: kind, writer: "edit"}
		tests[kind+": kubectl patch restoring the same template is a hand edit"] = testCase{kind: kind, writer: "patch"}
		tests[kind+": the undo's managedFields stripped prove nothing"] = testCase{kind: kind, writer: "undo",
			edit: func(_ *testing.T, live *unstructured.Unstructured) { live.SetManagedFields(nil) }}
		tests[kind+": kubectl's server-side apply (Apply) is no undo"] = testCase{kind: kind, writer: "undo",
			edit: func(t *testing.T, live *unstructured.Unstructured) { setUndoEntry(t, live, "operation", "Apply") }}
		tests[kind+": kubectl's write to a subresource is no undo"] = testCase{kind: kind, writer: "undo",
			edit: func(t *testing.T, live *unstructured.Unstructured) { setUndoEntry(t, live, "subresource", "scale") }}
		tests[kind+": kubectl.exe (rollout undo on Windows) is an undo"] = testCase{kind: kind, writer: "undo", want: want,
			edit: func(t *testing.T, live *unstructured.Unstructured) { setUndoEntry(t, live, "manager", "kubectl.exe") }}
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := "stale-writers/" + tc.kind
			live := readObject(t, dir, tc.writer+"-live.yaml")
			if tc.edit != nil {
				tc.edit(t, live)
			}
			a := NewAnalyzer()
			an, err := a.AnalyzeLive(live)
			if err != nil {
				t.Fatal(err)
			}
			if !MayHaveStaleLastApplied(live, an) {
				t.Fatal("MayHaveStaleLastApplied = false: the template did not drift from last-applied")
			}
			rb, err := a.StaleRollback(live, readObjects(t, dir, tc.writer+"-revisions.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, verdictOf(t, rb)); diff != "" {
				t.Errorf("StaleRollback (-want +got):\n%s", diff)
			}
		})
	}
}

func verdictOf(t *testing.T, rb *Rollback) staleVerdict {
	t.Helper()
	if rb == nil {
		return staleVerdict{}
	}
	if !rb.StaleLastApplied || !rb.Confirmed {
		t.Errorf("StaleRollback returned a rollback that is not a confirmed stale last-applied: %+v", rb)
	}
	return staleVerdict{RevisionKind: rb.RevisionKind, Revision: rb.Revision, RepairSource: rb.RepairSource,
		RepairedImage: container(decodeLA(t, rb.RepairedLastApplied))["image"].(string)}
}

// setUndoEntry sets field of live's managedFields entry of the undo
// (manager kubectl) to value.
func setUndoEntry(t *testing.T, live *unstructured.Unstructured, field, value string) {
	t.Helper()
	entries, _, err := unstructured.NestedSlice(live.Object, "metadata", "managedFields")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range entries {
		if e := e.(map[string]any); e["manager"] == "kubectl" {
			e[field], found = value, true
		}
	}
	if !found {
		t.Fatal("no managedFields entry of kubectl")
	}
	mustSet(t, live, entries, "metadata", "managedFields")
}
