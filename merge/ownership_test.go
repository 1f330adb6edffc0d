package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A field that a person set with a client of their own (here a UI whose
// field manager is "k9s") is an orphan only when that manager is named a
// person's: by default any manager that is not kubectl's is a controller's
// or a tool's.
func TestPersonFieldManagers(t *testing.T) {
	tests := map[string]struct {
		opts    []Option
		orphans []string
	}{
		"by default another client is a tool": {},
		"named as a person's, its fields are orphans": {
			opts:    []Option{WithKubectlManagers("k9s")},
			orphans: []string{"spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, "seed003-restarted-at")
			live := f.live.DeepCopy()
			mfs := live.GetManagedFields()
			for i := range mfs {
				if mfs[i].Manager == "kubectl-rollout" {
					mfs[i].Manager = "k9s"
				}
			}
			live.SetManagedFields(mfs)
			_, an, err := NewAnalyzer(tc.opts...).predictApply(live, f.modified)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.orphans, paths(an.Orphans)); diff != "" {
				t.Errorf("orphans (-want +got):\n%s", diff)
			}
		})
	}
}

// kubectl autoscale only creates an HPA, as kubectl create does: its
// entry owns the server's defaults too (metrics, a CPU utilization of 80,
// when --cpu-percent is not given), which the first apply of a manifest
// that leaves them to the server keeps. They are no orphan, and pruning
// them would only bring the default back.
func TestAutoscaleCreatesAsKubectlCreate(t *testing.T) {
	f := loadFixture(t, "autoscaled-first-apply")
	_, an, err := NewAnalyzer().predictApply(f.live, f.modified)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(nil), paths(an.Orphans)); diff != "" {
		t.Errorf("orphans (-want +got):\n%s", diff)
	}
}

// oc, OpenShift's CLI, runs kubectl's rollout undo under its own user
// agent, so its entry may be an undo's; but oc set env, volumes and probe
// write under the same name, so only kubectl's entry proves one (the
// audit's stale-last-applied repair stands on that proof). Nor does a
// kubectl binary named after its version, which only may be one.
func TestUndoManagers(t *testing.T) {
	type verdict struct{ MayBe, Proves bool }
	tests := map[string]struct {
		owner Owner
		want  verdict
	}{
		"kubectl rollout undo":          {owner: Owner{Manager: "kubectl", Operation: "Update"}, want: verdict{MayBe: true, Proves: true}},
		"kubectl.exe rollout undo":      {owner: Owner{Manager: "kubectl.exe", Operation: "Update"}, want: verdict{MayBe: true, Proves: true}},
		"oc rollout undo or oc set env": {owner: Owner{Manager: "oc", Operation: "Update"}, want: verdict{MayBe: true}},
		"oc.exe on Windows":             {owner: Owner{Manager: "oc.exe", Operation: "Update"}, want: verdict{MayBe: true}},
		"kubectl scale":                 {owner: Owner{Manager: "kubectl", Operation: "Update", Subresource: "scale"}},
		"a server-side apply as oc":     {owner: Owner{Manager: "oc", Operation: "Apply"}},
		"another tool":                  {owner: Owner{Manager: "k9s", Operation: "Update"}},
		// kubectl binaries named after their version, kept side by side.
		"kubectl.1.32 rollout undo":      {owner: Owner{Manager: "kubectl.1.32", Operation: "Update"}, want: verdict{MayBe: true}},
		"kubectl-1.31 rollout undo":      {owner: Owner{Manager: "kubectl-1.31", Operation: "Update"}, want: verdict{MayBe: true}},
		"kubectl1.30 rollout undo":       {owner: Owner{Manager: "kubectl1.30", Operation: "Update"}, want: verdict{MayBe: true}},
		"kubectl-v1.29.exe rollout undo": {owner: Owner{Manager: "kubectl-v1.29.exe", Operation: "Update"}, want: verdict{MayBe: true}},
		"kubectl's edit":                 {owner: Owner{Manager: "kubectl-edit", Operation: "Update"}},
		"a kubectl plugin":               {owner: Owner{Manager: "kubectl-neat", Operation: "Update"}},
		"a kubectl symlinked as k":       {owner: Owner{Manager: "k", Operation: "Update"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := verdict{MayBe: MayBeUndoEntry(tc.owner), Proves: IsUndoEntry(tc.owner)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
