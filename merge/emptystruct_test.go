package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A field a person set inside a struct that an applier's entry owns as an
// empty struct is the person's (found by test/e2e/generative): kubectl
// replace --force --save-config re-creates the Deployment and its entry
// owns the server's resources: {} as f:resources: {}; kubectl set
// resources --requests=cpu=90m then sets requests.cpu; the apply of the
// manifest, which has no resources, must report it. The empty entry owns
// the struct, not what is put in it later: only an atomic value's entry
// owns its parts whole. The fixture is the object as the API server
// stores it after those commands. The struct existed before the person
// wrote in it, so the orphan is the field, not the struct (wholeStruct).
func TestFieldSetInsideAnEmptyStructAnApplierOwnsIsAnOrphan(t *testing.T) {
	live := readObject(t, "recreated-then-set-resources", "live.yaml")
	manifest := readObject(t, "recreated-then-set-resources", "modified.yaml")
	_, an, err := NewAnalyzer().predictApply(live, manifest)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"spec.template.spec.containers[name=minio].resources.requests.cpu"}
	if diff := cmp.Diff(want, paths(an.Orphans)); diff != "" {
		t.Errorf("orphans (-want +got):\n%s", diff)
	}
}
