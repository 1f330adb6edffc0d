package webhook

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// TestRemedyWritesWhatTheRuleSwitchWrote holds the mutating pass to what
// it wrote before the remedies became data (issue 28): for every captured
// review (testdata/reviews and testdata/bench), with the bundled rules'
// actions that write switched on, the object that review.Repair leaves
// from the decisions' patches is byte for byte the one that the old
// switch on rule IDs (oldRepair, kept here as the oracle) left.
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

// oldRepair is internal/review's Repair as it was before the remedies
// became data: a switch on the rule ID.
func oldRepair(rv *review.Review, decisions []policy.Decision) ([]byte, error) {
	obj := rv.New.DeepCopy()
	for _, d := range decisions {
		var err error
		switch d.Rule {
		case policy.RuleStaleLastApplied:
			err = oldRepairLastApplied(obj, rv.Input.Analysis)
		case policy.RuleDefaultedDependent, policy.RuleOrphanedField:
			err = oldRemovePaths(obj, d.Paths)
		case policy.RuleReplicasReset:
			err = oldKeepReplicas(obj, rv.Old)
		default:
			err = fmt.Errorf("rule %s asked for %s, which apply-hygiene cannot carry out for it", d.Rule, d.Action)
		}
		if err != nil {
			return nil, fmt.Errorf("carrying out %s (%s): %w", d.Rule, d.Action, err)
		}
	}
	return json.Marshal(obj.Object)
}

func oldRepairLastApplied(obj *unstructured.Unstructured, an *merge.Analysis) error {
	if an == nil || an.Rollback == nil || an.Rollback.RepairedLastApplied == "" {
		return fmt.Errorf("no repaired last-applied to write")
	}
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[merge.LastAppliedAnnotation] = an.Rollback.RepairedLastApplied
	obj.SetAnnotations(ann)
	return nil
}

func oldKeepReplicas(obj, old *unstructured.Unstructured) error {
	if old == nil {
		return fmt.Errorf("no stored object to keep spec.replicas from")
	}
	live, found, err := unstructured.NestedFieldNoCopy(old.Object, "spec", "replicas")
	if err != nil || !found || live == nil {
		return fmt.Errorf("the stored object has no spec.replicas to keep")
	}
	return unstructured.SetNestedField(obj.Object, runtime.DeepCopyJSONValue(live), "spec", "replicas")
}

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
