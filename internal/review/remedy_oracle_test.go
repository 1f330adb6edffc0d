package review

import (
	"encoding/json"
	"fmt"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// TestRepairWritesWhatTheRuleSwitchWrote holds Repair, on the fixtures of
// this package's repairs and prunes, to the object that the switch on
// rule IDs wrote before the remedies became data (issue 28; oldRepair,
// kept here as the oracle). The captured reviews are held to it in
// webhook's TestRemedyWritesWhatTheRuleSwitchWrote; these are the
// repairs no capture has: replicas-reset, defaulted-dependent, and two
// orphans of one list.
func TestRepairWritesWhatTheRuleSwitchWrote(t *testing.T) {
	writing := policy.Config{Rules: map[string]policy.RuleConfig{
		"orphaned-field": {Action: policy.ActionPrune}, "replicas-reset": {Action: policy.ActionRepair},
	}}
	tests := map[string]struct {
		old, new *unstructured.Unstructured
		rule     policy.RuleID
	}{
		"replicas-reset keeps the live count": {old: web(t, 5, int64(2)), new: web(t, 1, nil), rule: policy.RuleReplicasReset},
		"defaulted-dependent removes the OnDelete sibling": {
			old: fixture(t, "ondelete", "live"), new: fixture(t, "ondelete", "applied"), rule: policy.RuleDefaultedDependent,
		},
		"orphaned-field prunes two orphans of one list": {
			old: fixture(t, "prune-two-env", "live"), new: fixture(t, "prune-two-env", "applied"), rule: policy.RuleOrphanedField,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := NewReviewer(nil, engine(t, writing), cluster{})
			rv, err := r.ReviewUpdate(t.Context(), apply(tc.old, tc.new), Mutate)
			if err != nil {
				t.Fatal(err)
			}
			mutations := rv.DecisionsWith(Mutate.Actions()...)
			if len(mutations) == 0 || mutations[0].Rule != tc.rule {
				t.Fatalf("mutations = %+v, want %s's", mutations, tc.rule)
			}
			want, err := oldRepair(rv, mutations)
			if err != nil {
				t.Fatalf("oracle: %v", err)
			}
			got, err := rv.Repair(mutations)
			if err != nil {
				t.Fatalf("Repair: %v", err)
			}
			if string(got) != string(want) {
				t.Errorf("Repair wrote\n%s\nthe rule switch wrote\n%s", got, want)
			}
		})
	}
}

// oldRepair is Repair as it was before the remedies became data: a
// switch on the rule ID.
func oldRepair(rv *Review, decisions []policy.Decision) ([]byte, error) {
	obj := rv.New.DeepCopy()
	for _, d := range decisions {
		var err error
		switch d.Rule {
		case policy.RuleStaleLastApplied:
			an := rv.Input.Analysis
			if an == nil || an.Rollback == nil || an.Rollback.RepairedLastApplied == "" {
				return nil, fmt.Errorf("no repaired last-applied to write")
			}
			ann := obj.GetAnnotations()
			if ann == nil {
				ann = map[string]string{}
			}
			ann[lastAppliedAnnotation] = an.Rollback.RepairedLastApplied
			obj.SetAnnotations(ann)
		case policy.RuleDefaultedDependent, policy.RuleOrphanedField:
			err = oldRemovePaths(obj, d.Paths)
		case policy.RuleReplicasReset:
			live, found, _ := unstructured.NestedFieldNoCopy(rv.Old.Object, "spec", "replicas")
			if !found || live == nil {
				return nil, fmt.Errorf("the stored object has no spec.replicas to keep")
			}
			err = unstructured.SetNestedField(obj.Object, runtime.DeepCopyJSONValue(live), "spec", "replicas")
		default:
			err = fmt.Errorf("rule %s asked for %s, which apply-hygiene cannot carry out for it", d.Rule, d.Action)
		}
		if err != nil {
			return nil, err
		}
	}
	return json.Marshal(obj.Object)
}

// oldRemovePaths removed each field one at a time, finding its pointer
// again after each removal.
func oldRemovePaths(obj *unstructured.Unstructured, paths []string) error {
	for _, s := range paths {
		p, err := merge.ParsePath(s)
		if err != nil {
			return err
		}
		ptr, ok := merge.JSONPointer(obj.Object, p)
		if !ok {
			continue
		}
		ops, err := json.Marshal([]map[string]string{{"op": "remove", "path": ptr}})
		if err != nil {
			return err
		}
		patch, err := jsonpatch.DecodePatch(ops)
		if err != nil {
			return err
		}
		doc, err := json.Marshal(obj.Object)
		if err != nil {
			return err
		}
		out, err := patch.Apply(doc)
		if err != nil {
			return err
		}
		if err := obj.UnmarshalJSON(out); err != nil {
			return err
		}
	}
	return nil
}
