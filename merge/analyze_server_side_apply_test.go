package merge

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The fixtures testdata/ssa-*/{old,new}.yaml are the objects of one
// server-side apply as the webhook sees them; analysis.json is the golden
// analysis (go test ./merge -update).
func TestAnalyzeServerSideApplyFixtures(t *testing.T) {
	tests := map[string]struct {
		dir     string
		manager string
		orphans []string
	}{
		"restartedAt of kubectl rollout restart is orphaned (kubernetes#99003)": {
			dir: "ssa-restarted-at", manager: "kubectl",
			orphans: []string{"spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]"},
		},
		// kubectl (any field manager) moves client-side apply's fields to
		// the applier right after this apply and applies again, which
		// deletes FEATURE_FLAGS; a client-go applier would keep it, but
		// admission cannot tell the two apart: missed, never falsely
		// reported.
		"what client-side apply wrote and the applied configuration dropped is left to kubectl's upgrade": {
			dir: "ssa-client-side-leftovers", manager: "ci-deployer",
		},
		// A StatefulSet's server defaults that kubectl edit --save-config
		// recorded in last-applied are no leftovers of client-side apply:
		// removed, the server puts them straight back (soak seed 271126,
		// sequence 073: [orphaned-field]
		// spec.updateStrategy.rollingUpdate.maxUnavailable "set by
		// kubectl-client-side-apply" when the removal proof could not be
		// made and the table of defaults was all there was).
		"a StatefulSet's defaults in a saved record are no leftovers": {
			dir: "ssa-statefulset-saved-record", manager: "argocd-controller",
		},
		// A mesh injector's stamp that kubectl edit --save-config recorded
		// in last-applied, which nobody owns: kubectl apply's entry holds
		// the annotations map only as the empty leaf it once wrote (the
		// injector stamps after the API server tracks the write), so the
		// stamp is no leftover of client-side apply, and removed, the
		// injector stamps it again (soak seed 271126, sequence 222:
		// [orphaned-field] of the stamp "set by
		// kubectl-client-side-apply" on Argo CD's server-side apply).
		"a mesh stamp in a saved record is nobody's, no leftover": {
			dir: "ssa-mesh-stamp-saved-record", manager: "argocd-controller",
		},
		// The objects of test/e2e/generative's
		// TestMeshStampInASavedRecordIsNoOrphanOfAServerSideApply: kubectl
		// edit --save-config added example.com/team and recorded the
		// mesh's stamp. kubectl-edit's entry owns the key, so kubectl's
		// migration takes it away (it did: it was gone after the
		// apply), and the stamp is nobody's: neither is a leftover.
		"a key that kubectl edit --save-config added goes with the migration": {
			dir: "ssa-saved-record-edit-key", manager: "argocd-controller",
		},
		// A mesh injector's stamp that nobody owns, in an annotations map
		// that kubectl-replace's entry holds as the empty leaf Flux's
		// clean-up of last-applied left it (kubectl replace
		// --save-config, then Flux's JSON patch removed the annotation):
		// the entry owns the map, not the keys others put in it, so the
		// stamp is no person's orphan of Argo CD's server-side apply, as
		// it is none of a client-side apply's (soak seed 271126, sequence
		// 495: [orphaned-field] of the stamp "set by kubectl-replace").
		"a mesh stamp in a map a person's entry holds empty is nobody's": {
			dir: "ssa-mesh-stamp-replace-annotations-map", manager: "argocd-controller",
			orphans: []string{"metadata.annotations[gen.example.com/annotate-12]"},
		},
		// A tool's server-side apply of one field (cert-manager's
		// cainjector applies caBundle alone) leaves last-applied as it
		// was: a label that last-applied has and kubectl label
		// --overwrite changed is the next client-side apply's to set
		// back, no orphan of this apply; pruned, the tool's write
		// removed the person's value of a field last-applied owns.
		"a field last-applied has is no orphan of a tool's apply of another field": {
			dir: "ssa-partial-apply-label-in-last-applied", manager: "cainjector",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old, new := readObject(t, tc.dir, "old.yaml"), readObject(t, tc.dir, "new.yaml")
			an, err := NewAnalyzer().AnalyzeServerSideApply(old, new, tc.manager)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.orphans, paths(an.Orphans)); diff != "" {
				t.Errorf("orphans (-want +got):\n%s", diff)
			}
			golden(t, tc.dir, "analysis.json", an)
		})
	}
}

// restartedAt is the orphan of the ssa-restarted-at fixture.
const restartedAt = "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]"

func TestAnalyzeServerSideApplyOwners(t *testing.T) {
	tests := map[string]struct {
		// edit changes the managedFields of the fixture's new object.
		edit    func(t *testing.T, mfs []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry
		manager string
		orphans []string
	}{
		"a field that only kubectl-rollout owns is orphaned": {
			manager: "kubectl", orphans: []string{restartedAt},
		},
		"an undo's manager kubectl (Update) is a person's write too": {
			edit:    renameManager("kubectl-rollout", "kubectl"),
			manager: "kubectl", orphans: []string{restartedAt},
		},
		"a field that a controller owns too is no orphan": {
			edit:    addOwner("my-operator", metav1.ManagedFieldsOperationUpdate),
			manager: "kubectl",
		},
		"a field that another applier owns is no orphan": {
			edit:    addOwner("ci-deployer", metav1.ManagedFieldsOperationApply),
			manager: "kubectl",
		},
		"a field that a non-kubectl manager alone owns is no orphan": {
			edit:    renameManager("kubectl-rollout", "argo-rollouts"),
			manager: "kubectl",
		},
		"kubectl's own apply of the last-applied annotation alone lists nothing": {
			edit:    renameManager("kubectl", LastAppliedManager),
			manager: LastAppliedManager,
		},
		"no Apply entry of the manager: nothing was applied": {
			manager: "someone-else",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old, new := readObject(t, "ssa-restarted-at", "old.yaml"), readObject(t, "ssa-restarted-at", "new.yaml")
			if tc.edit != nil {
				new.SetManagedFields(tc.edit(t, new.GetManagedFields()))
			}
			an, err := NewAnalyzer().AnalyzeServerSideApply(old, new, tc.manager)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.orphans, paths(an.Orphans)); diff != "" {
				t.Errorf("orphans (-want +got):\n%s", diff)
			}
		})
	}
}

func renameManager(from, to string) func(*testing.T, []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	return func(_ *testing.T, mfs []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
		for i := range mfs {
			if mfs[i].Manager == from {
				mfs[i].Manager = to
			}
		}
		return mfs
	}
}

// addOwner adds an entry of manager owning restartedAt.
func addOwner(manager string, op metav1.ManagedFieldsOperationType) func(*testing.T, []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	return func(t *testing.T, mfs []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
		for _, e := range mfs {
			if e.Manager == "kubectl-rollout" {
				e.Manager, e.Operation = manager, op
				return append(mfs, e)
			}
		}
		t.Fatal("no kubectl-rollout entry in the fixture")
		return nil
	}
}

// A StatefulSet switched to OnDelete by server-side apply keeps the
// defaulted rollingUpdate, which nobody applied: a defaulted dependent.
func TestAnalyzeServerSideApplyDefaultedDependent(t *testing.T) {
	f := loadFixture(t, "statefulset-ondelete")
	old := f.live.DeepCopy()
	old.SetManagedFields(nil)
	new := old.DeepCopy()
	if err := unstructured.SetNestedField(new.Object, "OnDelete", "spec", "updateStrategy", "type"); err != nil {
		t.Fatal(err)
	}
	applied := `{"f:spec":{"f:replicas":{},"f:updateStrategy":{"f:type":{}}}}`
	new.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply,
		APIVersion: "apps/v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(applied)}})
	an, err := NewAnalyzer().AnalyzeServerSideApply(old, new, "kubectl")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"spec.updateStrategy.rollingUpdate"}, paths(an.DefaultedDependents)); diff != "" {
		t.Errorf("defaulted dependents (-want +got):\n%s", diff)
	}
}

// kubectl apply --server-side after kubectl rollout restart: the apply does
// not own restartedAt, kubectl-rollout does, so it stays forever.
func ExampleAnalyzer_AnalyzeServerSideApply() {
	decode := func(s string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(s)); err != nil {
			panic(err)
		}
		return u
	}
	old := decode(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default",
	  "managedFields":[{"manager":"kubectl-rollout","operation":"Update","apiVersion":"apps/v1","fieldsType":"FieldsV1",
	    "fieldsV1":{"f:spec":{"f:template":{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/restartedAt":{}}}}}}}]},
	  "spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2024-05-02T08:30:00Z"}},
	    "spec":{"containers":[{"name":"nginx","image":"nginx:1.26"}]}}}}`)
	new := old.DeepCopy()
	_ = unstructured.SetNestedField(new.Object, []any{map[string]any{"name": "nginx", "image": "nginx:1.27"}}, "spec", "template", "spec", "containers")
	new.SetManagedFields(append(new.GetManagedFields(), metav1.ManagedFieldsEntry{
		Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "apps/v1", FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`),
	}))

	an, err := NewAnalyzer().AnalyzeServerSideApply(old, new, "kubectl")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, o := range an.Orphans {
		fmt.Println(o.Path, o.Result, o.Owners[0].Manager)
	}
	// Output:
	// spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt] 2024-05-02T08:30:00Z kubectl-rollout
}

// After apply-hygiene's mutating webhook pruned an orphan, the validating
// webhook sees the apply without it: the apply did not remove it, so it is
// no revert (seed 003 in prune mode).
func TestAnalyzeUpdateAfterPruneReportsNoRevert(t *testing.T) {
	f := loadFixture(t, "seed003-restarted-at")
	res, _, err := NewAnalyzer().predictApply(f.live, f.modified)
	if err != nil {
		t.Fatal(err)
	}
	pruned := res.Result.DeepCopy()
	unstructured.RemoveNestedField(pruned.Object, "spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt")
	an, err := NewAnalyzer().AnalyzeUpdate(f.live, pruned)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(an.Reverts); len(got) != 0 {
		t.Errorf("reverts = %q, want none", got)
	}
	if got := paths(an.Orphans); len(got) != 0 {
		t.Errorf("orphans = %q, want none: the prune removed it", got)
	}
}

// kubectl set image, then kubectl apply of the unchanged manifest (seed
// 001): last-applied stays the same, yet the apply puts the image back.
func TestAnalyzeClientSideApplyOfUnchangedManifestReportsRevert(t *testing.T) {
	f := loadFixture(t, "seed001-set-image-reverted")
	old := f.modified.DeepCopy()
	setLastApplied(t, old, f.modified)
	setContainer(old, "image", "nginx:1.8")
	old.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl-set", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1",
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{"f:image":{}}}}}}}`)}})
	new := old.DeepCopy()
	setContainer(new, "image", "nginx:1.7.9")

	an, err := NewAnalyzer().AnalyzeClientSideApply(old, new)
	if err != nil {
		t.Fatal(err)
	}
	if an.Operation != "apply" {
		t.Errorf("operation = %q, want apply", an.Operation)
	}
	if diff := cmp.Diff([]string{"spec.template.spec.containers[name=nginx].image"}, paths(an.Reverts)); diff != "" {
		t.Errorf("reverts (-want +got):\n%s", diff)
	}
	byUpdate, err := NewAnalyzer().AnalyzeUpdate(old, new)
	if err != nil {
		t.Fatal(err)
	}
	if len(byUpdate.Reverts) != 0 || byUpdate.Operation != "update" {
		t.Errorf("AnalyzeUpdate = operation %q, reverts %v; want an update without reverts (it cannot tell the apply)", byUpdate.Operation, paths(byUpdate.Reverts))
	}
}

// A server default that a person's write owns (kubectl replace --force
// re-creates the object, and its entry owns every default) is no orphan
// of a server-side apply that leaves it out, as it is none of a
// client-side apply's: removed, the server sets it again (generative
// seed 60334, Argo CD's server-side apply after kubectl replace --force).
func TestAnalyzeServerSideApplyServerDefaultsAreNoOrphans(t *testing.T) {
	old, new := readObject(t, "ssa-restarted-at", "old.yaml"), readObject(t, "ssa-restarted-at", "new.yaml")
	defaults := `{"f:spec":{"f:template":{"f:spec":{"f:terminationGracePeriodSeconds":{},"f:dnsPolicy":{},` +
		`"f:containers":{"k:{\"name\":\"nginx\"}":{"f:terminationMessagePath":{},"f:terminationMessagePolicy":{},"f:imagePullPolicy":{}}}}}}}`
	new.SetManagedFields(append(new.GetManagedFields(), metav1.ManagedFieldsEntry{
		Manager: "kubectl-replace", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1",
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(defaults),
	}))
	an, err := NewAnalyzer().AnalyzeServerSideApply(old, new, "kubectl")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{restartedAt}, paths(an.Orphans)); diff != "" {
		t.Errorf("orphans (-want +got):\n%s", diff)
	}
}
