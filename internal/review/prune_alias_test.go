package review

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// TestPruneOfAServiceAccountName: an object given a service account with
// kubectl set serviceaccount (or kubectl replace) and then applied
// without one. The prune of the orphaned serviceAccountName removes its
// deprecated alias serviceAccount too, in the same decision, or the API
// server would fill the name back from the alias (the v1 conversion of
// PodSpec) and the prune would do nothing. It removes nothing, and claims
// nothing, where the removal would not stick (an alias that names another
// service account) or is refused (a Pod's spec is immutable: the API
// server would reject the user's apply).
func TestPruneOfAServiceAccountName(t *testing.T) {
	const removes = "apply-hygiene removes it in this request."
	template := []string{"spec", "template", "spec"}
	jobTemplate := []string{"spec", "jobTemplate", "spec", "template", "spec"}
	for _, tc := range []struct {
		name    string
		fixture string
		// alias, when set, is the serviceAccount the applied object's
		// pod spec (at spec) has instead of the name's copy.
		alias   string
		spec    []string
		removes policy.Patch
		// says is what the message says of the fix.
		says string
	}{
		{name: "a Deployment's goes with its alias", fixture: "prune-service-account", spec: template, says: removes, removes: policy.Patch{
			{Op: policy.OpRemove, Path: "/spec/template/spec/serviceAccountName"},
			{Op: policy.OpRemove, Path: "/spec/template/spec/serviceAccount"},
		}},
		{name: "a CronJob's goes with its alias", fixture: "prune-cronjob-sa", spec: jobTemplate, says: removes, removes: policy.Patch{
			{Op: policy.OpRemove, Path: "/spec/jobTemplate/spec/template/spec/serviceAccountName"},
			{Op: policy.OpRemove, Path: "/spec/jobTemplate/spec/template/spec/serviceAccount"},
		}},
		{name: "one whose alias names another account stays", fixture: "prune-service-account", alias: "runner", spec: template, says: "Remove it with: kubectl edit deployment.apps/web -n shop"},
		{name: "a Pod's stays: its spec is immutable", fixture: "prune-pod-sa", spec: []string{"spec"}, says: "The API server refuses its removal while the object exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, new := fixture(t, tc.fixture, "live"), fixture(t, tc.fixture, "applied")
			if tc.alias != "" {
				if err := unstructured.SetNestedField(new.Object, tc.alias, append(tc.spec, "serviceAccount")...); err != nil {
					t.Fatal(err)
				}
			}
			rv, prunes := orphanPrune(t, old, new)
			if diff := cmp.Diff(tc.removes, prunes[0].Patch, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("patch of the prune (-want +got):\n%s", diff)
			}
			if claims := strings.Contains(prunes[0].Message, removes); claims != (len(tc.removes) > 0) {
				t.Errorf("message %q: claims the removal %v, want %v", prunes[0].Message, claims, len(tc.removes) > 0)
			}
			if !strings.Contains(prunes[0].Message, tc.says) {
				t.Errorf("message %q does not say %q", prunes[0].Message, tc.says)
			}
			want := new.DeepCopy()
			if len(tc.removes) > 0 {
				unstructured.RemoveNestedField(want.Object, append(tc.spec, "serviceAccountName")...)
				unstructured.RemoveNestedField(want.Object, append(tc.spec, "serviceAccount")...)
			}
			if diff := cmp.Diff(want.Object, repairedBy(t, rv, prunes).Object); diff != "" {
				t.Errorf("pruned object (-want +got):\n%s", diff)
			}
		})
	}
}

// orphanPrune reviews the apply of new over old with orphaned-field's
// action prune, and returns the review and its one prune decision (of
// orphaned-field), failing t when there is not exactly one.
func orphanPrune(t *testing.T, old, new *unstructured.Unstructured) (*Review, []policy.Decision) {
	t.Helper()
	rv := mutatingApply(t, withAction("orphaned-field", policy.ActionPrune), old, new)
	prunes := rv.DecisionsWith(policy.ActionPrune)
	if len(prunes) != 1 || prunes[0].Rule != policy.RuleOrphanedField {
		t.Fatalf("prunes = %+v, want one of orphaned-field", prunes)
	}
	return rv, prunes
}

// withAction is the configuration that gives rule action.
func withAction(rule string, action policy.Action) policy.Config {
	return policy.Config{Rules: map[string]policy.RuleConfig{rule: {Action: action}}}
}

// mutatingApply reviews the apply of new over old in the mutating pass
// with the bundled rules under cfg, failing t on an error.
func mutatingApply(t *testing.T, cfg policy.Config, old, new *unstructured.Unstructured) *Review {
	t.Helper()
	rv, err := NewReviewer(nil, engine(t, cfg), cluster{}).ReviewUpdate(t.Context(), apply(old, new), Mutate)
	if err != nil {
		t.Fatal(err)
	}
	return rv
}
