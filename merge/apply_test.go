package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestAnalyzeApplySeeds(t *testing.T) {
	tests := map[string]struct {
		dir      string
		opts     []Option
		strategy Strategy
		orphans  []string
		reverts  []string
		deps     []string
		replicas bool
		// captured is set when expected.yaml is what a real API server
		// stored after the apply (see test/e2e/merge).
		captured bool
	}{
		"containers merge by name: a deleted, b keeps args, c added, d kept": {
			dir:     "seed000-containers",
			orphans: []string{"spec.template.spec.containers[name=nginx-helper-b].args", "spec.template.spec.containers[name=nginx-helper-d]"},
		},
		"containers example of seed 002 sets the new image": {
			dir:     "seed002-containers",
			orphans: []string{"spec.template.spec.containers[name=nginx-helper-b].args", "spec.template.spec.containers[name=nginx-helper-d]"},
		},
		"a primitive in the file and in live is set to the file value":       {dir: "seed000-primitive-set-live-has-it"},
		"a primitive in the file but not in live is set to the file value":   {dir: "seed000-primitive-set-live-lacks-it"},
		"a primitive dropped from the file is cleared from live":             {dir: "seed000-primitive-clear"},
		"a primitive in neither the file nor last-applied is kept, orphaned": {dir: "seed000-primitive-keep", orphans: []string{"spec.minReadySeconds"}},
		"a map key in the file and in live merges its sub fields":            {dir: "seed000-map-compare-subfields"},
		"a map key in the file but not in live is added":                     {dir: "seed000-map-add-key"},
		"a map key dropped from the file is deleted":                         {dir: "seed000-map-delete-key"},
		"a map key in neither the file nor last-applied is kept, orphaned": {
			dir: "seed000-map-keep-key", orphans: []string{"metadata.labels.team"},
		},
		"a merge list of primitives gives [a, c, d]": {
			dir: "seed001-primitive-list-merge", orphans: []string{"metadata.finalizers[=example.com/d]"},
		},
		"a merge list element in the file and in live stays":     {dir: "seed001-primitive-list-in-both"},
		"a merge list element in the file but not live is added": {dir: "seed001-primitive-list-add"},
		"a merge list element dropped from the file is removed":  {dir: "seed001-primitive-list-remove"},
		"a merge list element in neither is kept, orphaned": {
			dir: "seed001-primitive-list-keep", orphans: []string{"metadata.finalizers[=example.com/x]"},
		},
		"a container in the file and in live merges recursively": {
			dir: "seed001-containers-merge", orphans: []string{"spec.template.spec.containers[name=nginx].args"},
		},
		"a container in the file but not in live is added": {dir: "seed001-containers-add"},
		"a container dropped from the file is removed":     {dir: "seed001-containers-remove"},
		"a container in neither is kept, orphaned": {
			dir: "seed001-containers-keep", orphans: []string{"spec.template.spec.containers[name=nginx-helper-d]"},
		},
		"args without patchStrategy are replaced by [a, c], losing d": {
			dir: "seed000-args-replace", reverts: []string{"spec.template.spec.containers[name=nginx].args"},
		},
		"kubectl scale's replicas survive, minReadySeconds goes": {dir: "seed002-scale-then-apply"},
		"the merge calculation of seed 000":                      {dir: "seed000-merge-calculation"},
		"a field added to the file is added":                     {dir: "seed001-add-field"},
		"a field in the file replaces the defaulted value":       {dir: "seed001-update-field"},
		"replicas dropped from the file are deleted and reset": {
			dir: "seed001-delete-fields", replicas: true,
		},
		"a manifest with null pod-template annotations deletes restartedAt: a revert": {
			dir: "null-template-annotations", reverts: []string{"spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]"},
		},
		"an image set by kubectl set is reverted by apply": {
			dir: "seed001-set-image-reverted", reverts: []string{"spec.template.spec.containers[name=nginx].image"},
		},
		"Recreate with a strategic merge patch drops rollingUpdate by $retainKeys": {dir: "seed002-recreate-strategic"},
		"Recreate with a JSON merge patch keeps the defaulted rollingUpdate": {
			dir: "seed002-recreate-json-merge", opts: []Option{WithScheme(runtime.NewScheme())}, strategy: JSONMergePatch,
			deps: []string{"spec.strategy.rollingUpdate"},
		},
		"a StatefulSet switched to OnDelete keeps the defaulted rollingUpdate": {
			dir: "statefulset-ondelete", deps: []string{"spec.updateStrategy.rollingUpdate"},
		},
		"a DaemonSet switched to OnDelete keeps the defaulted rollingUpdate": {
			dir: "daemonset-ondelete", deps: []string{"spec.updateStrategy.rollingUpdate"},
		},
		// The API server accepts a DaemonSet's rollingUpdate under
		// OnDelete: one that is not the server's default was set by
		// someone and is not a defaulted dependent.
		"a DaemonSet switched to OnDelete keeps a rollingUpdate someone set: no dependent": {
			dir: "daemonset-ondelete-set-by-hand",
		},
		// kubectl create owns what it made, server defaults included, so
		// ownership cannot tell its settings from defaults: no orphans;
		// the missing-last-applied rule reports the object instead.
		"without last-applied apply cannot delete minReadySeconds, and what kubectl create made is no orphan": {
			dir: "seed002-missing-last-applied",
		},
		"restartedAt added by rollout restart is orphaned, owned by kubectl-rollout": {
			dir: "seed003-restarted-at", orphans: []string{"spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]"},
		},
		"after rollout undo the TO_BE_DELETED env entry is orphaned and the image revert is reported": {
			dir:      "seed004-undo",
			captured: true,
			orphans:  []string{"spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]"},
			reverts:  []string{"spec.template.spec.containers[name=nginx].image"},
		},
		// kubectl never reads the previous manifest's apiVersion or kind
		// (kubectl patcher.go:126-188, strategicpatch CreateThreeWayMergePatch):
		// its deletions are computed all the same.
		"a last-applied without apiVersion or kind still deletes replicas and minReadySeconds": {
			dir: "last-applied-without-kind", replicas: true,
		},
		"a custom resource's last-applied without apiVersion or kind gets the same JSON merge patch": {
			dir: "last-applied-without-kind-crd", strategy: JSONMergePatch, orphans: []string{"spec.color"},
			reverts: []string{"spec.items"},
		},
		"a custom resource gets a JSON merge patch that replaces lists": {
			dir: "crd-json-merge", strategy: JSONMergePatch, orphans: []string{"spec.color"},
			reverts: []string{"spec.items"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, tc.dir)
			a := NewAnalyzer(tc.opts...)
			res, an, err := a.predictApply(f.live, f.modified)
			if err != nil {
				t.Fatal(err)
			}
			if res == nil {
				t.Fatalf("no apply computed: last-applied %+v", an.LastApplied)
			}
			want, got := withoutAnnotation(f.expected), withoutAnnotation(res.Result)
			if tc.captured {
				want, got = withoutServerFields(f.expected), withoutServerFields(res.Result)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			wantLA, _ := LastAppliedValue(f.modified)
			if got := res.Result.GetAnnotations()[LastAppliedAnnotation]; got != wantLA {
				t.Errorf("last-applied after apply = %q, want %q", got, wantLA)
			}
			strategy := tc.strategy
			if strategy == "" {
				strategy = StrategicMergePatch
			}
			if res.Strategy != strategy || an.Strategy != strategy {
				t.Errorf("strategy = %q, analysis %q, want %q", res.Strategy, an.Strategy, strategy)
			}
			if diff := cmp.Diff(tc.orphans, paths(an.Orphans)); diff != "" {
				t.Errorf("orphans (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.reverts, paths(an.Reverts)); diff != "" {
				t.Errorf("reverts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.deps, paths(an.DefaultedDependents)); diff != "" {
				t.Errorf("defaulted dependents (-want +got):\n%s", diff)
			}
			if got := an.ReplicasReset != nil; got != tc.replicas {
				t.Errorf("replicas reset = %v, want %v", got, tc.replicas)
			}
			golden(t, tc.dir, "analysis.json", map[string]any{"patch": res.Patch, "analysis": an})
		})
	}
}

// withoutServerFields returns obj without what the API server manages and
// apply never computes, as the differential test in test/e2e/merge
// compares: resourceVersion, generation, uid, creationTimestamp,
// managedFields and status.
func withoutServerFields(obj *unstructured.Unstructured) map[string]any {
	out := obj.DeepCopy()
	for _, f := range []string{"resourceVersion", "generation", "uid", "creationTimestamp", "managedFields"} {
		unstructured.RemoveNestedField(out.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(out.Object, "status")
	return roundTrip(out.Object)
}

func paths(facts []FieldFact) []string {
	var out []string
	for _, f := range facts {
		out = append(out, f.Path.String())
	}
	return out
}
