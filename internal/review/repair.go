package review

import (
	"fmt"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Repair carries out repair and prune decisions on the request's object
// and returns it encoded. Each decision's remedy is its patch, which its
// rule built from merge's facts (policy.ApplyRemedy): it changes only
// the fields the rule names, and a decision without one is an error.
func (rv *Review) Repair(decisions []policy.Decision) ([]byte, error) {
	raw, err := policy.ApplyRemedyJSON(rv.New.Object, decisions)
	if err != nil {
		return nil, fmt.Errorf("carrying out %s: %w", rulesOf(decisions), err)
	}
	return raw, nil
}

// rulesOf lists the rules and actions of ds, e.g. "orphaned-field
// (prune), stale-last-applied (repair)".
func rulesOf(ds []policy.Decision) string {
	s := ""
	for i, d := range ds {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s (%s)", d.Rule, d.Action)
	}
	return s
}
