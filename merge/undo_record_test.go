package merge

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A field that kubectl rollout undo restored is an orphan when no
// manifest has it, though the undo's entry (kubectl/Update) owns
// last-applied: kubectl apply set-last-applied writes under the same
// entry, as does apply-hygiene's repair of the undo. An entry of that name
// that owns the defaults of a manifest it applied (kubectl before field
// managers had names of their own) still reports none of them.
func TestOrphanRestoredByUndoWhoseEntryOwnsLastApplied(t *testing.T) {
	const dir = "set-last-applied-then-undo"
	restored := "spec.template.spec.containers[name=nginx].env[name=GEN]"
	tests := map[string]struct {
		// legacy makes kubectl the manager of the client-side apply's
		// entry and drops the undo's: an apply of an older kubectl.
		legacy bool
		want   []string
	}{
		"set-last-applied, then an undo that restores GEN": {want: []string{restored}},
		"an older kubectl's apply, under the name kubectl": {legacy: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			live, result := readObject(t, dir, "live.yaml"), readObject(t, dir, "result.yaml")
			if tc.legacy {
				live, result = asLegacyApply(live), asLegacyApply(result)
			}
			an, err := NewAnalyzer().AnalyzeClientSideApply(live, result)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, paths(an.Orphans)); diff != "" {
				t.Errorf("apply's orphans (-want +got):\n%s", diff)
			}
			stored, err := NewAnalyzer().AnalyzeLive(live)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, paths(stored.Orphans)); diff != "" {
				t.Errorf("stored object's orphans (-want +got):\n%s", diff)
			}
		})
	}
}

// asLegacyApply renames obj's client-side apply entry to kubectl, makes
// it own last-applied, and drops the entry that had that name.
func asLegacyApply(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	mfs := slices.DeleteFunc(out.GetManagedFields(), func(mf metav1.ManagedFieldsEntry) bool { return mf.Manager == "kubectl" })
	for i := range mfs {
		if mfs[i].Manager == ClientSideApplyManager {
			mfs[i].Manager = "kubectl"
			fields := strings.Replace(string(mfs[i].FieldsV1.Raw), `"f:annotations":{}`, `"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}}`, 1)
			mfs[i].FieldsV1 = metav1.NewFieldsV1(fields)
		}
	}
	out.SetManagedFields(mfs)
	return out
}
