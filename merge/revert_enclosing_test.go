package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A field a person set since the last apply is reverted also when the
// apply's patch deletes a field enclosing it: last-applied has the
// enclosing field and the manifest does not (kubectl apply then sends it
// as null). Generative seed 37964, sequence 018: the apply removed the
// whole env list, with the variable kubectl set env had added, and said
// nothing.
func TestRevertOfAFieldInsideARemovedList(t *testing.T) {
	const dir = "daemonset-env-removed-with-its-list"
	an, err := NewAnalyzer().AnalyzeClientSideApply(readObject(t, dir, "live.yaml"), readObject(t, dir, "result.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got := paths(an.Reverts)
	want := []string{"spec.template.spec.containers[name=node-exporter].env[name=GEN_SET_7]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reverts (-want +got):\n%s", diff)
	}
}
