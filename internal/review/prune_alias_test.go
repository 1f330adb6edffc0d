package review

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// A Deployment given a service account with kubectl set serviceaccount and
// then applied without one: the prune of the orphaned serviceAccountName
// removes its deprecated alias serviceAccount too, in the same decision,
// or the API server would fill the name back from the alias (the v1
// conversion of PodSpec) and the prune would do nothing.
func TestPruneRemovesServiceAccountNameWithItsAlias(t *testing.T) {
	old, new := fixture(t, "prune-service-account", "live"), fixture(t, "prune-service-account", "applied")
	r := NewReviewer(nil, engine(t, policy.Config{Rules: map[string]policy.RuleConfig{"orphaned-field": {Action: policy.ActionPrune}}}), cluster{})
	rv, err := r.ReviewUpdate(t.Context(), apply(old, new), Mutate)
	if err != nil {
		t.Fatal(err)
	}
	prunes := rv.DecisionsWith(policy.ActionPrune)
	if len(prunes) != 1 || prunes[0].Rule != policy.RuleOrphanedField {
		t.Fatalf("prunes = %+v, want one of orphaned-field", prunes)
	}
	wantPatch := policy.Patch{
		{Op: policy.OpRemove, Path: "/spec/template/spec/serviceAccountName"},
		{Op: policy.OpRemove, Path: "/spec/template/spec/serviceAccount"},
	}
	if diff := cmp.Diff(wantPatch, prunes[0].Patch); diff != "" {
		t.Errorf("patch of the prune (-want +got):\n%s", diff)
	}
	if !strings.Contains(prunes[0].Message, "apply-hygiene removes it in this request.") {
		t.Errorf("message %q does not say that the prune removes it", prunes[0].Message)
	}
	repaired := repairedBy(t, rv, prunes)
	want := new.DeepCopy()
	unstructured.RemoveNestedField(want.Object, "spec", "template", "spec", "serviceAccountName")
	unstructured.RemoveNestedField(want.Object, "spec", "template", "spec", "serviceAccount")
	if diff := cmp.Diff(want.Object, repaired.Object); diff != "" {
		t.Errorf("pruned object (-want +got):\n%s", diff)
	}
}
