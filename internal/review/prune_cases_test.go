package review

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// the prune of an orphaned serviceAccountName takes its alias on
// a CronJob too (spec.jobTemplate.spec.template.spec).
func TestPruneCronJobServiceAccountWithAlias(t *testing.T) {
	old, new := fixture(t, "prune-cronjob-sa", "live"), fixture(t, "prune-cronjob-sa", "applied")
	r := NewReviewer(nil, engine(t, policy.Config{Rules: map[string]policy.RuleConfig{"orphaned-field": {Action: policy.ActionPrune}}}), cluster{})
	rv, err := r.ReviewUpdate(t.Context(), apply(old, new), Mutate)
	if err != nil {
		t.Fatal(err)
	}
	prunes := rv.DecisionsWith(policy.ActionPrune)
	if len(prunes) != 1 {
		t.Fatalf("prunes = %+v, want one", prunes)
	}
	want := policy.Patch{
		{Op: policy.OpRemove, Path: "/spec/jobTemplate/spec/template/spec/serviceAccountName"},
		{Op: policy.OpRemove, Path: "/spec/jobTemplate/spec/template/spec/serviceAccount"},
	}
	if diff := cmp.Diff(want, prunes[0].Patch); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}
	repaired := repairedBy(t, rv, prunes)
	if _, ok, _ := unstructured.NestedString(repaired.Object, "spec", "jobTemplate", "spec", "template", "spec", "serviceAccount"); ok {
		t.Errorf("alias left behind")
	}
}

// a request whose alias names another service account than the
// orphaned serviceAccountName: the prune decision carries an empty patch,
// the mutating pass must carry it out without an error and change
// nothing, and the message claims no removal.
func TestPruneNothingWhenTheAliasDiffersWithoutError(t *testing.T) {
	old, new := fixture(t, "prune-service-account", "live"), fixture(t, "prune-service-account", "applied")
	if err := unstructured.SetNestedField(new.Object, "runner", "spec", "template", "spec", "serviceAccount"); err != nil {
		t.Fatal(err)
	}
	r := NewReviewer(nil, engine(t, policy.Config{Rules: map[string]policy.RuleConfig{"orphaned-field": {Action: policy.ActionPrune}}}), cluster{})
	rv, err := r.ReviewUpdate(t.Context(), apply(old, new), Mutate)
	if err != nil {
		t.Fatal(err)
	}
	prunes := rv.DecisionsWith(policy.ActionPrune)
	for _, d := range prunes {
		if len(d.Patch) != 0 {
			t.Errorf("decision %s on %v writes %v, want nothing", d.Rule, d.Paths, d.Patch)
		}
		if strings.Contains(d.Message, "apply-hygiene removes it") {
			t.Errorf("message claims a removal: %s", d.Message)
		}
	}
	if len(prunes) == 0 {
		t.Fatalf("no prune decision: %v", decisionsOf(rv))
	}
	repaired := repairedBy(t, rv, prunes)
	if diff := cmp.Diff(new.Object, repaired.Object); diff != "" {
		t.Errorf("repaired object (-want +got):\n%s", diff)
	}
}

// A Pod's serviceAccountName is immutable after creation (the
// API server's pod update validation). Before removedWith, the prune of
// an orphaned one was undone by the v1 conversion (filled back from the
// alias) and the apply went through; removing the alias too changes the
// name, and the API server rejects the user's apply. A prune must not
// write a Pod's serviceAccountName.
func TestPruneLeavesAPodsImmutableServiceAccount(t *testing.T) {
	old, new := fixture(t, "prune-pod-sa", "live"), fixture(t, "prune-pod-sa", "applied")
	r := NewReviewer(nil, engine(t, policy.Config{Rules: map[string]policy.RuleConfig{"orphaned-field": {Action: policy.ActionPrune}}}), cluster{})
	rv, err := r.ReviewUpdate(t.Context(), apply(old, new), Mutate)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("decisions: %v", decisionsOf(rv))
	for _, d := range rv.DecisionsWith(policy.ActionPrune) {
		for _, op := range d.Patch {
			if op.Path == "/spec/serviceAccountName" || op.Path == "/spec/serviceAccount" {
				t.Errorf("prune of %v writes %s %s on a Pod, whose service account is immutable", d.Paths, op.Op, op.Path)
			}
		}
	}
}
