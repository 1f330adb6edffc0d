package review

import (
	"embed"
	"encoding/json"
	"path"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// An apply whose manifest drops replicas=2 after a scale to 5: the server
// defaulted the count to 1. With replicas-reset's repair action the
// mutating pass keeps 5 and the new last-applied (without replicas), and
// the validating pass then finds nothing; with the default action the
// validating pass denies.
func TestReplicasResetRepairKeepsTheLiveCount(t *testing.T) {
	const repairMessage = "[replicas-reset] Deployment shop/web: the manifest drops spec.replicas, which last-applied has; apply-hygiene keeps its live value 5 " +
		"in this request, and last-applied no longer has it, so from now on kubectl apply leaves it to kubectl scale or an autoscaler."
	old, new := web(t, 5, int64(2)), web(t, 1, nil)

	r := NewReviewer(nil, engine(t, withAction("replicas-reset", policy.ActionRepair)), cluster{})
	mutating, err := r.ReviewUpdate(t.Context(), apply(old, new), Mutate)
	if err != nil {
		t.Fatal(err)
	}
	repairs := mutating.DecisionsWith(policy.ActionRepair)
	if diff := cmp.Diff([]string{"repair " + repairMessage}, decisionsOf(&Review{Decisions: repairs})); diff != "" {
		t.Fatalf("mutating pass (-want +got):\n%s", diff)
	}
	repaired := repairedBy(t, mutating, repairs)
	want := new.DeepCopy()
	want.Object["spec"] = map[string]any{"replicas": int64(5)}
	if diff := cmp.Diff(want.Object, repaired.Object); diff != "" {
		t.Errorf("repaired object (-want +got):\n%s", diff)
	}
	validating, err := r.ReviewUpdate(t.Context(), apply(old, repaired), Validate)
	if err != nil {
		t.Fatal(err)
	}
	if got := decisionsOf(validating); len(got) != 0 {
		t.Errorf("validating pass after the repair decided %q, want nothing", got)
	}

	denying := NewReviewer(nil, engine(t, policy.Config{}), cluster{})
	rv, err := denying.ReviewUpdate(t.Context(), apply(old, new), Validate)
	if err != nil {
		t.Fatal(err)
	}
	if got := rv.DecisionsWith(policy.ActionDeny); len(got) != 1 || got[0].Rule != policy.RuleReplicasReset {
		t.Errorf("default action: deny decisions %+v, want replicas-reset's", got)
	}
}

// A repair whose decision carries no patch (a stored object without
// spec.replicas gives replicas-reset's rule no count to keep, so it sets
// none) fails, and the object stays as it was.
func TestRepairWithoutAPatchFails(t *testing.T) {
	rv := &Review{New: &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}}
	_, err := rv.Repair([]policy.Decision{{Rule: policy.RuleReplicasReset, Action: policy.ActionRepair}})
	const want = "carrying out replicas-reset (repair): rule replicas-reset asked for repair, which apply-hygiene cannot carry out for it: its decision has no patch"
	if err == nil || err.Error() != want {
		t.Errorf("Repair error = %v, want %q", err, want)
	}
	if diff := cmp.Diff(map[string]any{"spec": map[string]any{}}, rv.New.Object); diff != "" {
		t.Errorf("Repair changed the object (-want +got):\n%s", diff)
	}
}

//go:embed testdata
var fixtures embed.FS

// fixture reads testdata/<dir>/<name>.yaml.
func fixture(t *testing.T, dir, name string) *unstructured.Unstructured {
	t.Helper()
	raw, err := fixtures.ReadFile(path.Join("testdata", dir, name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return object(t, string(raw))
}

// Two orphans of one list, pruned in one request: each decision's patch
// names its element's index in the object as the request has it, and the
// removals go from the end of the list backwards, so that removing X (at
// 1) shifts nothing before Y (at 3) goes.
func TestPruneRemovesTwoOrphansOfOneList(t *testing.T) {
	old, new := fixture(t, "prune-two-env", "live"), fixture(t, "prune-two-env", "applied")
	rv := mutatingApply(t, withAction("orphaned-field", policy.ActionPrune), old, new)
	prunes := rv.DecisionsWith(policy.ActionPrune)
	var patches []policy.Patch
	for _, d := range prunes {
		patches = append(patches, d.Patch)
	}
	wantPatches := []policy.Patch{
		{{Op: policy.OpRemove, Path: "/spec/template/spec/containers/0/env/1"}},
		{{Op: policy.OpRemove, Path: "/spec/template/spec/containers/0/env/3"}},
	}
	if diff := cmp.Diff(wantPatches, patches); diff != "" {
		t.Fatalf("patches of the prunes (-want +got):\n%s", diff)
	}
	repaired := repairedBy(t, rv, prunes)
	env, _, err := unstructured.NestedSlice(repaired.Object, "spec", "template", "spec", "containers")
	if err != nil || len(env) != 1 {
		t.Fatalf("containers = %v (%v), want nginx", env, err)
	}
	want := []any{map[string]any{"name": "A", "value": "a"}, map[string]any{"name": "B", "value": "b"}}
	if diff := cmp.Diff(want, env[0].(map[string]any)["env"]); diff != "" {
		t.Errorf("env after the prune (-want +got):\n%s", diff)
	}
}

// A StatefulSet switched to OnDelete: defaulted-dependent's repair removes
// the defaulted rollingUpdate at its pointer, and only it.
func TestDefaultedDependentRepairRemovesTheSibling(t *testing.T) {
	old, new := fixture(t, "ondelete", "live"), fixture(t, "ondelete", "applied")
	rv := mutatingApply(t, policy.Config{}, old, new)
	repairs := rv.DecisionsWith(policy.ActionRepair)
	if len(repairs) != 1 || repairs[0].Rule != policy.RuleDefaultedDependent {
		t.Fatalf("repairs = %+v, want defaulted-dependent's", repairs)
	}
	if diff := cmp.Diff(policy.Patch{{Op: policy.OpRemove, Path: "/spec/updateStrategy/rollingUpdate"}}, repairs[0].Patch); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}
	raw, err := rv.Repair(repairs)
	if err != nil {
		t.Fatal(err)
	}
	want := new.DeepCopy()
	unstructured.RemoveNestedField(want.Object, "spec", "updateStrategy", "rollingUpdate")
	wantRaw, err := json.Marshal(want.Object)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(wantRaw), string(raw)); diff != "" {
		t.Errorf("repaired object (-want +got):\n%s", diff)
	}
}

// A custom resource whose manifest drops spec (or sets it to null) after a
// scale: the object the request has is without spec, and replicas-reset's
// repair creates it with the live count (merge's setPatch), as the rule
// switch's unstructured.SetNestedField did, instead of failing on
// /spec/replicas.
func TestReplicasResetRepairCreatesSpec(t *testing.T) {
	tests := map[string]struct {
		applied string
	}{
		"a manifest without spec":    {applied: "applied"},
		"a manifest with spec: null": {applied: "applied-null-spec"},
	}
	r := NewReviewer(nil, engine(t, withAction("replicas-reset", policy.ActionRepair)), cluster{})
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old, new := fixture(t, "replicas-reset-widget", "live"), fixture(t, "replicas-reset-widget", tc.applied)
			rv, err := r.ReviewUpdate(t.Context(), apply(old, new), Mutate)
			if err != nil {
				t.Fatal(err)
			}
			repairs := rv.DecisionsWith(policy.ActionRepair)
			if len(repairs) != 1 || repairs[0].Rule != policy.RuleReplicasReset {
				t.Fatalf("repairs = %+v, want replicas-reset's", repairs)
			}
			repaired := repairedBy(t, rv, repairs)
			want := new.DeepCopy()
			want.Object["spec"] = map[string]any{"replicas": int64(5)}
			if diff := cmp.Diff(want.Object, repaired.Object); diff != "" {
				t.Errorf("repaired object (-want +got):\n%s", diff)
			}
		})
	}
}

// repairedBy returns the object rv.Repair writes for decisions, decoded;
// the test fails when it errors.
func repairedBy(t *testing.T, rv *Review, decisions []policy.Decision) *unstructured.Unstructured {
	t.Helper()
	raw, err := rv.Repair(decisions)
	if err != nil {
		t.Fatal(err)
	}
	repaired := &unstructured.Unstructured{}
	if err := repaired.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	return repaired
}
