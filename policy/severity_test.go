package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSeverity(t *testing.T) {
	want := map[RuleID]string{
		RuleImperativeEdit:      "medium",
		RuleApplyRevertsDrift:   "medium",
		RuleOrphanedField:       "low",
		RuleStaleLastApplied:    "high",
		RuleDefaultedDependent:  "medium",
		RuleReplicasReset:       "high",
		RuleMissingLastApplied:  "low",
		RuleInvalidLastApplied:  "high",
		RuleLastAppliedTooLarge: "medium",
		RuleServerSideOwned:     "medium",
		RuleReplicasAutoscaled:  "medium",
		"team-label":            "medium",
	}
	got := map[RuleID]string{"team-label": Severity("team-label")}
	for _, r := range Rules() {
		got[r] = Severity(r)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Severity (-want +got):\n%s", diff)
	}
}
