package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestWorkloadFactsKeepToTheirKinds: the facts of the workload-only rules
// (defaulted-dependent, stale-last-applied) are found on the apps/v1
// workloads and on no other kind, not even one of the same name in
// another group or one with a pod template of its own. The StatefulSet
// switched to OnDelete (testdata/statefulset-ondelete) is the control.
func TestWorkloadFactsKeepToTheirKinds(t *testing.T) {
	sts := loadFixture(t, "statefulset-ondelete")
	tests := map[string]struct {
		apiVersion, kind string
		dependents       []string
	}{
		"the apps/v1 StatefulSet leaves its defaulted rollingUpdate": {apiVersion: "apps/v1", kind: "StatefulSet",
			dependents: []string{"spec.updateStrategy.rollingUpdate"}},
		"an OpenKruise StatefulSet is another kind":    {apiVersion: "apps.kruise.io/v1beta1", kind: "StatefulSet"},
		"a custom DaemonSet is another kind":           {apiVersion: "example.com/v1", kind: "DaemonSet"},
		"a custom resource has no defaulted dependent": {apiVersion: "example.com/v1", kind: "Widget"},
	}
	a := NewAnalyzer()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			live, manifest := retyped(sts.live, tc.apiVersion, tc.kind), retyped(sts.modified, tc.apiVersion, tc.kind)
			_, an, err := a.predictApply(live, manifest)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.dependents, paths(an.DefaultedDependents)); diff != "" {
				t.Errorf("defaulted dependents (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStaleLastAppliedKeepsToWorkloads: a pod template that drifted from
// last-applied may mean a rollout undo only on an apps/v1 workload; a
// CronJob's job template, a Job's template or a custom resource's never
// send the audit looking for revisions.
func TestStaleLastAppliedKeepsToWorkloads(t *testing.T) {
	undone := readObject(t, "seed004-undo", "live.yaml")
	tests := map[string]struct {
		apiVersion, kind string
		want             bool
	}{
		"the undone apps/v1 StatefulSet":       {apiVersion: "apps/v1", kind: "StatefulSet", want: true},
		"an OpenKruise StatefulSet":            {apiVersion: "apps.kruise.io/v1beta1", kind: "StatefulSet"},
		"a Job whose template drifted":         {apiVersion: "batch/v1", kind: "Job"},
		"a custom resource with a template":    {apiVersion: "example.com/v1", kind: "Widget"},
		"a ReplicaSet, which no undo rewrites": {apiVersion: "apps/v1", kind: "ReplicaSet"},
	}
	a := NewAnalyzer()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			live := retyped(undone, tc.apiVersion, tc.kind)
			an, err := a.AnalyzeLive(live)
			if err != nil {
				t.Fatal(err)
			}
			if got := MayHaveStaleLastApplied(live, an); got != tc.want {
				t.Errorf("MayHaveStaleLastApplied = %v, want %v (drift %v)", got, tc.want, paths(an.Drift))
			}
		})
	}
}

// retyped returns obj as another kind: its apiVersion and kind, in the
// object and in its last-applied annotation.
func retyped(obj *unstructured.Unstructured, apiVersion, kind string) *unstructured.Unstructured {
	out := obj.DeepCopy()
	out.SetAPIVersion(apiVersion)
	out.SetKind(kind)
	if la, ok := out.GetAnnotations()[LastAppliedAnnotation]; ok {
		orig := &unstructured.Unstructured{}
		if err := orig.UnmarshalJSON([]byte(la)); err != nil {
			panic(err)
		}
		orig.SetAPIVersion(apiVersion)
		orig.SetKind(kind)
		value, err := LastAppliedValue(orig)
		if err != nil {
			panic(err)
		}
		annots := out.GetAnnotations()
		annots[LastAppliedAnnotation] = value
		out.SetAnnotations(annots)
	}
	return out
}
