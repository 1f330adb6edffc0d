package policy

import (
	"maps"
	"regexp"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/rego"
)

// ruleLiteral finds the rule IDs that the bundled Rego decides about:
// lib.decision("id", …), lib.decision_or("id", …) and {"rule": "id", …}.
var ruleLiteral = regexp.MustCompile(`(?:lib\.decision(?:_or)?\(|"rule":\s*)"([a-z0-9-]+)"`)

// comment matches a Rego comment, which may name example rules.
var comment = regexp.MustCompile(`(?m)#.*$`)

func withoutComments(text string) string { return comment.ReplaceAllString(text, "") }

// TestRuleIDs keeps the Go constants equal to the rules that the bundled
// Rego configures (lib.rego's default_config) and decides about.
func TestRuleIDs(t *testing.T) {
	want := slices.Sorted(slices.Values(Rules()))
	files, err := bundledModules(false)
	if err != nil {
		t.Fatal(err)
	}
	decided := map[RuleID]bool{}
	opts := []func(*rego.Rego){rego.Query("data.applyhygiene.lib.default_config.rules")}
	for _, f := range files {
		opts = append(opts, rego.Module(f.name, f.text))
		for _, m := range ruleLiteral.FindAllStringSubmatch(withoutComments(f.text), -1) {
			decided[RuleID(m[1])] = true
		}
	}
	if diff := cmp.Diff(want, slices.Sorted(maps.Keys(decided))); diff != "" {
		t.Errorf("rules the bundled Rego decides about (-constants +rego):\n%s", diff)
	}
	rs, err := rego.New(opts...).Eval(t.Context())
	if err != nil || len(rs) != 1 {
		t.Fatalf("evaluating default_config: %v (%d results)", err, len(rs))
	}
	configured, ok := rs[0].Expressions[0].Value.(map[string]any)
	if !ok {
		t.Fatalf("default_config.rules is a %T", rs[0].Expressions[0].Value)
	}
	var got []RuleID
	for id := range configured {
		got = append(got, RuleID(id))
	}
	if diff := cmp.Diff(want, slices.Sorted(slices.Values(got))); diff != "" {
		t.Errorf("rules in lib.rego's default_config (-constants +rego):\n%s", diff)
	}
}
