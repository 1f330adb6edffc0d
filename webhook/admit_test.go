package webhook

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// TestHandlersDecideAsAdmit sends every captured review through the two
// handlers as the API server does (the mutating webhook, its patch
// applied, then the validating webhook) and through review.AdmitRequest,
// which `kubectl hygiene test` and `diff` call: the repairs, the repaired
// object, the denial and the warnings must be the same.
func TestHandlersDecideAsAdmit(t *testing.T) {
	captures, err := filepath.Glob(filepath.Join("testdata", "reviews", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	engine := newEngine(t)
	compared := 0
	for _, path := range captures {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		if strings.HasSuffix(name, ".cluster") {
			continue
		}
		compared++
		t.Run(name, func(t *testing.T) {
			req := loadReview(t, name)
			r := NewReviewer(engine, loadCluster(t, filepath.Join("testdata", "reviews", name+".cluster.json")))
			mutating := r.Mutating().Handle(t.Context(), req)
			if !mutating.Allowed {
				t.Fatalf("mutating webhook refused: %v", mutating.Result)
			}
			validatingReq := req
			if len(mutating.Patches) > 0 {
				ops, err := json.Marshal(mutating.Patches)
				if err != nil {
					t.Fatal(err)
				}
				patch, err := jsonpatch.DecodePatch(ops)
				if err != nil {
					t.Fatal(err)
				}
				patched, err := patch.Apply(req.Object.Raw)
				if err != nil {
					t.Fatalf("applying the mutating patch: %v", err)
				}
				validatingReq.Object.Raw, validatingReq.Object.Object = patched, nil
			}
			validating := r.Validating().Handle(t.Context(), validatingReq)

			admitted, err := r.core.AdmitRequest(t.Context(), &req.AdmissionRequest)
			if err != nil {
				t.Fatalf("AdmitRequest: %v", err)
			}
			if diff := cmp.Diff(rulesOf(mutating.Warnings), rulesOfDecisions(policy.Spoken(admitted.Repairs))); diff != "" {
				t.Errorf("repairs differ (-webhook +Admit):\n%s", diff)
			}
			if len(admitted.Patched) > 0 && !jsonpatch.Equal(admitted.Patched, validatingReq.Object.Raw) {
				t.Errorf("repaired objects differ:\nwebhook: %s\nAdmit:   %s", validatingReq.Object.Raw, admitted.Patched)
			}
			var denials, warnings []string
			if admitted.Validating != nil {
				for _, d := range admitted.Validating.DecisionsWith(policy.ActionDeny) {
					denials = append(denials, d.Message)
				}
				warnings = rulesOfDecisions(admitted.Validating.DecisionsWith(policy.ActionWarn))
			}
			gotDenial := ""
			if !validating.Allowed {
				gotDenial = validating.Result.Message
			}
			if want := strings.Join(denials, "\n"); gotDenial != want {
				t.Errorf("denial: webhook %q, Admit %q", gotDenial, want)
			}
			if diff := cmp.Diff(rulesOf(validating.Warnings), warnings); diff != "" {
				t.Errorf("warnings differ (-webhook +Admit):\n%s", diff)
			}
		})
	}
	if compared < 20 {
		t.Fatalf("compared %d captured reviews; want every one of testdata/reviews", compared)
	}
}

// rulesOfDecisions returns each decision's rule ID.
func rulesOfDecisions(ds []policy.Decision) []string {
	var rules []string
	for _, d := range ds {
		rules = append(rules, string(d.Rule))
	}
	return rules
}
