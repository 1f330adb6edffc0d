package policy

import "testing"

// An orphaned serviceAccountName (removing its alias with it) and
// a second decision that removes the alias too: the shared removal is
// made once, and the remedy applies without an error.
func TestRemedyRemovesASharedAliasOnce(t *testing.T) {
	obj := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"serviceAccountName": "builder", "serviceAccount": "builder", "containers": []any{map[string]any{"name": "c"}},
	}}}}
	ds := []Decision{
		{Rule: RuleOrphanedField, Action: ActionPrune, Patch: Patch{{Op: OpRemove, Path: "/spec/template/spec/serviceAccountName"}, {Op: OpRemove, Path: "/spec/template/spec/serviceAccount"}}},
		{Rule: RuleOrphanedField, Action: ActionPrune, Patch: Patch{{Op: OpRemove, Path: "/spec/template/spec/serviceAccount"}}},
	}
	out, err := ApplyRemedy(obj, ds)
	if err != nil {
		t.Fatal(err)
	}
	spec := out["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	if _, ok := spec["serviceAccount"]; ok {
		t.Errorf("alias left: %v", spec)
	}
}
