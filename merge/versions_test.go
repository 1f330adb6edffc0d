package merge

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestApplyInAnotherVersion: kubectl computes its three-way patch in the
// version of the manifest, and the API server converts the object to the
// version the webhook is registered for (matchPolicy Equivalent). When the
// two differ, a field may have another name or shape in each (an
// autoscaling/v1 HPA's targetCPUUtilizationPercentage is autoscaling/v2's
// spec.metrics; a CRD's conversion renames spec.hostname to spec.host), and
// comparing them path by path makes the field that the manifest sets an
// orphan, to be pruned. Such an apply is not judged; the same apply in the
// webhook's version is the control.
func TestApplyInAnotherVersion(t *testing.T) {
	tests := map[string]struct {
		dir                  string
		wantOrphans, wantRev []string
	}{
		"an autoscaling/v1 manifest seen as autoscaling/v2 orphans nothing": {dir: "versions/hpa-applied-as-v1"},
		"a v1beta1 custom resource seen as v1 orphans nothing":              {dir: "versions/widget-applied-as-v1beta1"},
		"an autoscaling/v2 manifest without the metrics orphans them": {
			dir: "versions/hpa-applied-as-v2", wantOrphans: []string{"spec.metrics"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			live, result := readObject(t, tc.dir, "live.yaml"), readObject(t, tc.dir, "result.yaml")
			an, err := NewAnalyzer().AnalyzeClientSideApply(live, result)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]string{"orphans": tc.wantOrphans, "reverts": tc.wantRev}
			got := map[string][]string{"orphans": paths(an.Orphans), "reverts": paths(an.Reverts)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("facts (-want +got):\n%s", diff)
			}
			if an.LastApplied.Status != LastAppliedPresent {
				t.Errorf("last-applied %+v, want present", an.LastApplied)
			}
		})
	}
}

// TestEditInAnotherVersion: the next apply of last-applied is computed in
// last-applied's version; an edit that the webhook sees in another one
// cannot be compared with it path by path. Ingress's backend is
// serviceName/servicePort in networking.k8s.io/v1beta1 and
// service.name/service.port.number in v1: an edit that puts the port back to
// the applied 80 differs from last-applied's spec.rules in form only, and
// was an imperative edit to deny. Neither it nor the edit that moved the
// port away is judged (a miss, not a guess).
func TestEditInAnotherVersion(t *testing.T) {
	const dir = "versions/ingress-edited-as-v1"
	tests := map[string]struct{ old, new string }{
		"the edit back to the applied port": {old: "old.yaml", new: "new.yaml"},
		"the edit away from it":             {old: "new.yaml", new: "old.yaml"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			an, err := NewAnalyzer().AnalyzeUpdate(readObject(t, dir, tc.old), readObject(t, dir, tc.new))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string(nil), paths(an.ImperativeChanges)); diff != "" {
				t.Errorf("imperative changes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLiveInAnotherVersion: the audit and kubectl hygiene explain read an
// object in the version they list (autoscaling/v2), and its last-applied
// may be in another (autoscaling/v1). The CPU target that kubectl edit set
// is the manifest's targetCPUUtilizationPercentage there, no orphan for the
// audit's fix to remove, and last-applied's target is not missing from live.
func TestLiveInAnotherVersion(t *testing.T) {
	tests := map[string]struct {
		dir, file          string
		wantOrphans, drift []string
	}{
		"an autoscaling/v2 HPA applied as autoscaling/v1": {dir: "versions/hpa-applied-as-v1", file: "live.yaml"},
		"the same HPA applied as autoscaling/v2": {dir: "versions/hpa-applied-as-v2", file: "live.yaml",
			wantOrphans: []string{"spec.metrics"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			an, err := NewAnalyzer().AnalyzeLive(readObject(t, tc.dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]string{"orphans": tc.wantOrphans, "drift": tc.drift}
			got := map[string][]string{"orphans": paths(an.Orphans), "drift": paths(an.Drift)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("facts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServerSideApplyInAnotherVersion: a server-side applier's entry keeps
// its fields in the version it applied in. argocd-controller applied an
// autoscaling/v1 HPA whose CPU target is the spec.metrics that kubectl edit
// set in autoscaling/v2: its configuration holds that target, which is no
// orphan of its apply.
func TestServerSideApplyInAnotherVersion(t *testing.T) {
	const dir = "versions/hpa-server-side-applied-as-v1"
	an, err := NewAnalyzer().AnalyzeServerSideApply(readObject(t, dir, "old.yaml"), readObject(t, dir, "new.yaml"), "argocd-controller")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(nil), paths(an.Orphans)); diff != "" {
		t.Errorf("orphans (-want +got):\n%s", diff)
	}
}

// TestOwnerInAnotherVersion: an orphan is a field that people alone own,
// and a managedFields entry of another version names its fields in that
// version's terms. hpa-tuner owns autoscaling/v1's
// targetCPUUtilizationPercentage, which no autoscaling/v2 path of the
// object is: part of spec.metrics, which it manages with kubectl edit, and
// which is then no orphan of the apply nor of the audit (pruned, the
// controller's CPU target would go). Without that entry spec.metrics is
// an orphan (hpa-applied-as-v2).
func TestOwnerInAnotherVersion(t *testing.T) {
	tests := map[string]struct {
		dir         string
		wantOrphans []string
	}{
		"a controller's entry of autoscaling/v1 that no path of the object places": {dir: "versions/hpa-tuned-as-v1"},
		"people alone own the metrics":                                             {dir: "versions/hpa-applied-as-v2", wantOrphans: []string{"spec.metrics"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			live := readObject(t, tc.dir, "live.yaml")
			an, err := NewAnalyzer().AnalyzeClientSideApply(live, readObject(t, tc.dir, "result.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			ex, err := NewAnalyzer().Explain(live)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]string{"apply": tc.wantOrphans, "explain": tc.wantOrphans}
			got := map[string][]string{"apply": paths(an.Orphans), "explain": paths(ex.Analysis.Orphans)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("orphans (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServerSideOwnerInAnotherVersion is TestOwnerInAnotherVersion for a
// server-side apply (gitops, autoscaling/v2, without the metrics): with
// hpa-tuner's autoscaling/v1 entry spec.metrics is no orphan; without it,
// people alone own it.
func TestServerSideOwnerInAnotherVersion(t *testing.T) {
	const dir = "versions/hpa-tuned-server-side"
	withoutTuner := func(obj *unstructured.Unstructured) *unstructured.Unstructured {
		obj.SetManagedFields(slices.DeleteFunc(obj.GetManagedFields(), func(e metav1.ManagedFieldsEntry) bool { return e.Manager == "hpa-tuner" }))
		return obj
	}
	tests := map[string]struct {
		edit        func(*unstructured.Unstructured) *unstructured.Unstructured
		wantOrphans []string
	}{
		"a controller's entry of autoscaling/v1 that no path of the object places": {edit: func(o *unstructured.Unstructured) *unstructured.Unstructured { return o }},
		"people alone own the metrics":                                             {edit: withoutTuner, wantOrphans: []string{"spec.metrics"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old, new := tc.edit(readObject(t, dir, "old.yaml")), tc.edit(readObject(t, dir, "new.yaml"))
			an, err := NewAnalyzer().AnalyzeServerSideApply(old, new, "gitops")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantOrphans, paths(an.Orphans)); diff != "" {
				t.Errorf("orphans (-want +got):\n%s", diff)
			}
		})
	}
}
