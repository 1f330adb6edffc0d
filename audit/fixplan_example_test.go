package audit_test

import (
	"fmt"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// ExamplePlanFixes plans the fix of an orphaned restartedAt (its Fix as a
// scan fills it in: the patch and summary of the orphaned-field decision,
// which the rule took from merge's guarded remove patch) and prints the
// patch that
// a Fixer writes: the tests first, then the removal.
func ExamplePlanFixes() {
	web := merge.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	orphan := audit.Finding{
		Rule:    policy.RuleOrphanedField,
		Object:  web,
		Path:    "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]",
		Message: "[orphaned-field] … so it rolls the pods …",
		Fix: &audit.Fix{LastApplied: `{"kind":"Deployment"}`, Summary: "removed spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt] (rolls the pods)", Patch: policy.Patch{
			{Op: policy.OpTest, Path: "/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt", Value: "2026-01-01T00:00:00Z"},
			{Op: policy.OpRemove, Path: "/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt"},
		}},
	}
	edit := audit.Finding{Rule: policy.RuleImperativeEdit, Object: web, Path: "spec.replicas"}
	fixes, notFixed, _ := audit.PlanFixes([]audit.Finding{orphan, edit})
	for _, of := range fixes {
		patch, err := of.Patch()
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(of.Summary())
		fmt.Println(string(patch))
	}
	for _, f := range notFixed {
		fmt.Println("left to a person:", f.Rule, f.Path)
	}
	// Output:
	// removed spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt] (rolls the pods)
	// [{"op":"test","path":"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration","value":"{\"kind\":\"Deployment\"}"},{"op":"test","path":"/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt","value":"2026-01-01T00:00:00Z"},{"op":"remove","path":"/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt"}]
	// left to a person: imperative-edit spec.replicas
}
