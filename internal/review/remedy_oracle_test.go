package review

import (
	"encoding/json"
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
// repairs no capture has: replicas-reset, defaulted-dependent, two
// orphans of one list, and an orphaned serviceAccountName with its alias,
// where the remedy deliberately writes more than the switch did.
func TestRepairWritesWhatTheRuleSwitchWrote(t *testing.T) {
	writing := policy.Config{Rules: map[string]policy.RuleConfig{
		"orphaned-field": {Action: policy.ActionPrune}, "replicas-reset": {Action: policy.ActionRepair},
	}}
	tests := map[string]struct {
		old, new *unstructured.Unstructured
		rule     policy.RuleID
		// beyondTheSwitch are the pod spec fields (under
		// spec.template.spec) that the remedy removes and the switch
		// left: the object it wrote, without them, is the one to hold
		// Repair to.
		beyondTheSwitch []string
	}{
		"replicas-reset keeps the live count": {old: web(t, 5, int64(2)), new: web(t, 1, nil), rule: policy.RuleReplicasReset},
		"defaulted-dependent removes the OnDelete sibling": {
			old: fixture(t, "ondelete", "live"), new: fixture(t, "ondelete", "applied"), rule: policy.RuleDefaultedDependent,
		},
		"orphaned-field prunes two orphans of one list": {
			old: fixture(t, "prune-two-env", "live"), new: fixture(t, "prune-two-env", "applied"), rule: policy.RuleOrphanedField,
		},
		// The switch removed the decision's paths alone, so it left the
		// deprecated serviceAccount beside the serviceAccountName it
		// removed, and the API server filled the name back from it: the
		// prune did nothing. The remedy removes the alias too (the
		// orphan's removedWith), so here it differs from the switch by
		// exactly that field.
		"orphaned-field prunes serviceAccountName with its alias, which the switch left": {
			old: fixture(t, "prune-service-account", "live"), new: fixture(t, "prune-service-account", "applied"), rule: policy.RuleOrphanedField,
			beyondTheSwitch: []string{"serviceAccount"},
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
			if len(tc.beyondTheSwitch) > 0 {
				want = without(t, want, tc.beyondTheSwitch)
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

// without returns the encoded object raw without the pod spec fields
// (under spec.template.spec) named, encoded again.
func without(t *testing.T, raw []byte, podSpecFields []string) []byte {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	for _, f := range podSpecFields {
		unstructured.RemoveNestedField(obj.Object, "spec", "template", "spec", f)
	}
	out, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
