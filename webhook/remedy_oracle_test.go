package webhook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/policy"
	"github.com/apply-hygiene/apply-hygiene/test/remedyoracle"
)

// TestRemedyWritesWhatTheRuleSwitchWrote holds the mutating pass to what
// it wrote before the remedies became data (issue 28): for every captured
// review (testdata/reviews and testdata/bench), with the bundled rules'
// actions that write switched on, the object that review.Repair leaves
// from the decisions' patches is byte for byte the one that the old
// switch on rule IDs (test/remedyoracle) left.
func TestRemedyWritesWhatTheRuleSwitchWrote(t *testing.T) {
	writing := policy.Config{Rules: map[string]policy.RuleConfig{
		string(policy.RuleOrphanedField):      {Action: policy.ActionPrune},
		string(policy.RuleDefaultedDependent): {Action: policy.ActionRepair},
		string(policy.RuleReplicasReset):      {Action: policy.ActionRepair},
		string(policy.RuleStaleLastApplied):   {Action: policy.ActionRepair},
	}}
	engine, err := policy.New(t.Context(), policy.WithConfig(writing))
	if err != nil {
		t.Fatal(err)
	}
	var captures []string
	for _, dir := range []string{"reviews", "bench"} {
		matches, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range matches {
			if !strings.HasSuffix(m, ".cluster.json") {
				captures = append(captures, strings.TrimSuffix(m, ".json"))
			}
		}
	}
	rules := map[policy.RuleID]int{}
	for _, c := range captures {
		t.Run(filepath.Base(filepath.Dir(c))+"/"+filepath.Base(c), func(t *testing.T) {
			req := loadCapture(t, c+".json")
			r := NewReviewer(engine, loadCluster(t, c+".cluster.json"))
			rv, err := r.core.Review(t.Context(), &req, review.Mutate)
			if err != nil {
				t.Fatalf("Review: %v", err)
			}
			if rv == nil {
				return
			}
			mutations := rv.DecisionsWith(review.Mutate.Actions()...)
			if len(mutations) == 0 {
				return
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
			for _, d := range mutations {
				rules[d.Rule]++
			}
		})
	}
	// The captures repair an undo and prune orphans; replicas-reset's and
	// defaulted-dependent's remedies are held by their own tests
	// (internal/review TestReplicasResetRepairKeepsTheLiveCount, the e2e
	// OnDelete apply).
	t.Logf("compared %d captures; decisions that write, by rule: %v", len(captures), rules)
	for _, rule := range []policy.RuleID{policy.RuleStaleLastApplied, policy.RuleOrphanedField} {
		if rules[rule] == 0 {
			t.Errorf("no captured review had a %s decision that writes; compared %v", rule, rules)
		}
	}
}

func loadCapture(t *testing.T, path string) admissionv1.AdmissionRequest {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ar admissionv1.AdmissionReview
	if err := json.Unmarshal(raw, &ar); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	return *ar.Request
}
