package policy

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The audit writes a bundled rule's patch only, and knows it by the
// package that decided it: a user module that could add to a bundled
// rule's package, or change the helpers those rules trust, does not load.
func TestUserModulesInBundledPackagesFailToLoad(t *testing.T) {
	const decide = "decisions contains {\"rule\": \"orphaned-field\", \"action\": \"warn\", \"message\": \"[orphaned-field] x\", \"paths\": [], \"patch\": [{\"op\": \"remove\", \"path\": \"/metadata/labels\"}]}\n"
	tests := map[string]struct {
		src  string
		want Problem
	}{
		"a module in a bundled rule's package": {
			src:  "package applyhygiene.rules.orphaned_field\n\n" + decide,
			want: Problem{File: "m.rego", Line: 1, Message: "package applyhygiene.rules.orphaned_field defines data in package applyhygiene.rules.orphaned_field" + reservedAdvice},
		},
		"a module in applyhygiene.lib": {
			src:  "package applyhygiene.lib\n\nwrites(a) if a == \"warn\"\n",
			want: Problem{File: "m.rego", Line: 1, Message: "package applyhygiene.lib defines data in package applyhygiene.lib" + reservedAdvice},
		},
		"a module that overrides the configuration": {
			src:  "package applyhygiene.config\n\nrules := {\"orphaned-field\": {\"auditFix\": true}}\n",
			want: Problem{File: "m.rego", Line: 1, Message: "package applyhygiene.config defines data in package applyhygiene.config" + reservedAdvice},
		},
		"a module in a package inside applyhygiene.lib": {
			src:  "package applyhygiene.lib.extra\n\nx := 1\n",
			want: Problem{File: "m.rego", Line: 1, Message: "package applyhygiene.lib.extra defines data in package applyhygiene.lib" + reservedAdvice},
		},
		"a rule of package applyhygiene whose head leads into a bundled rule's package": {
			src:  "package applyhygiene\n\nrules.stale_last_applied." + decide,
			want: Problem{File: "m.rego", Line: 3, Message: "rule rules.stale_last_applied.decisions defines data in package applyhygiene.rules.stale_last_applied" + reservedAdvice},
		},
		"a rule of package applyhygiene whose head has a variable where a rule's package goes": {
			src:  "package applyhygiene\n\nrules[n] := {\"decisions\": set()} if some n in [\"orphaned_field\"]\n",
			want: Problem{File: "m.rego", Line: 3, Message: "rule rules[n] defines data in package applyhygiene.rules.apply_reverts_drift" + reservedAdvice},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := New(t.Context(), WithModules(map[string]string{"m.rego": tc.src}))
			var loadErr *LoadError
			if !errors.As(err, &loadErr) {
				t.Fatalf("New error = %v, want a *LoadError", err)
			}
			// The compiler may find the module wrong too (a rule that
			// conflicts with the bundled packages).
			if !slices.Contains(loadErr.Problems, tc.want) {
				t.Errorf("problems = %+v, want among them %+v", loadErr.Problems, tc.want)
			}
		})
	}
}

// reservedAdvice ends the message of a module refused for a reserved
// package.
const reservedAdvice = ", which is reserved for apply-hygiene's bundled rules, their helpers and the configuration of the chart's values: write your rules in a package of your own (package applyhygiene.rules.<your_rule>, or package applyhygiene adding to decisions)"

// An audit decision is Bundled only when a bundled rule's package made
// it: a user policy in a package of its own (or in package applyhygiene)
// that reuses a bundled rule's ID is not, whatever it sets; admission's
// decisions never carry it.
func TestAuditDecisionsSayWhetherABundledRuleMadeThem(t *testing.T) {
	const own = `package applyhygiene.rules.mine

decisions contains {"rule": "orphaned-field", "action": "warn", "message": "[orphaned-field] mine", "paths": ["metadata.labels"], "patch": [{"op": "remove", "path": "/metadata/labels"}]}
`
	const direct = `package applyhygiene

decisions contains {"rule": "stale-last-applied", "action": "warn", "message": "[stale-last-applied] direct", "paths": [], "bundled": true}
`
	e := newEngine(t, WithModules(map[string]string{"own.rego": own, "direct.rego": direct}))
	in := loadInput(t, "client-side-apply")
	in.Classification, in.Analysis.Operation = Audit, "live"
	got, err := e.Evaluate(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	bundled := map[string]bool{}
	for _, d := range got {
		bundled[strings.Fields(d.Message)[1]] = d.Bundled
	}
	want := map[string]bool{"Deployment": true, "mine": false, "direct": false}
	if diff := cmp.Diff(want, bundled); diff != "" {
		t.Errorf("bundled by the message's second word (-want +got):\n%s", diff)
	}

	admission, err := e.Evaluate(t.Context(), loadInput(t, "client-side-apply"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range admission {
		if d.Bundled {
			t.Errorf("admission decision %q is Bundled, want only the audit's", d.Message)
		}
	}
}
