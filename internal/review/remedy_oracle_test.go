package review

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/policy"
	"github.com/apply-hygiene/apply-hygiene/test/remedyoracle"
)

// TestRepairWritesWhatTheRuleSwitchWrote holds Repair, on the fixtures of
// this package's repairs and prunes, to the object that the switch on
// rule IDs wrote before the remedies became data (issue 28;
// test/remedyoracle). The captured reviews are held to it in
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
			want, err := remedyoracle.Repair(rv.Old, rv.New, rv.Input.Analysis, mutations)
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
