package policy

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// Policies whose silence the tests below know.
const (
	// noUpdatesByMallory decides on every write by mallory but a
	// controller's, whatever the analysis: it is never silent but for
	// controllers.
	noUpdatesByMallory = `package applyhygiene.rules.no_updates_by_mallory

import data.applyhygiene.lib

decisions contains lib.decision_or("no-updates-by-mallory", "deny", "[no-updates-by-mallory] mallory may not write", []) if {
	input.request.operation == "UPDATE"
	input.request.user.username == "mallory"
	input.classification != "controller"
}
`
	// driftOnServerSideApply reads the drift, which an empty analysis may
	// have.
	driftOnServerSideApply = `package applyhygiene.rules.ssa_drift

decisions contains {"rule": "ssa-drift", "action": "warn", "message": "[ssa-drift] drift", "paths": [f.path]} if {
	input.classification == "server-side-apply"
	some f in input.analysis.drift
}
`
	// wholeAnalysis binds the whole analysis: partial evaluation still
	// sees that an empty one has last-applied present.
	wholeAnalysis = `package applyhygiene.rules.whole_analysis

decisions contains {"rule": "whole-analysis", "action": "warn", "message": "[whole-analysis] missing", "paths": []} if {
	a := input.analysis
	a.lastApplied.status == "missing"
	input.classification == "save-config"
}
`
	// defaultAnalysis binds the whole analysis in a rule with a default,
	// which partial evaluation keeps unevaluated: save-config is not
	// silent, although the rule never decides on an empty analysis.
	defaultAnalysis = `package applyhygiene.rules.default_analysis

default analysis := {}

analysis := input.analysis

decisions contains {"rule": "default-analysis", "action": "warn", "message": "[default-analysis] missing", "paths": []} if {
	input.classification == "save-config"
	analysis.lastApplied.status == "missing"
}
`
	// sundays denies on Sundays: partial evaluation does not read the
	// clock, so it is silent for nothing.
	sundays = `package applyhygiene.rules.sundays

decisions contains {"rule": "sundays", "action": "deny", "message": "[sundays] not on Sundays", "paths": []} if {
	time.weekday(time.now_ns()) == "Sunday"
}
`
)

func without(classes ...Classification) []Classification {
	return slices.DeleteFunc(slices.Clone(classifications), func(c Classification) bool {
		return slices.Contains(classes, c)
	})
}

func TestSilentClassifications(t *testing.T) {
	tests := map[string]struct {
		modules map[string]string
		config  Config
		want    []Classification
	}{
		"the bundled rules never decide on an empty analysis": {
			want: classifications,
		},
		"neither do they with every rule on deny and exemptions": {
			config: Config{
				Rules:      map[string]RuleConfig{"missing-last-applied": {Action: ActionDeny}, "orphaned-field": {Action: ActionPrune}},
				Exemptions: Exemptions{Users: []string{"mallory"}, FieldManagers: []string{"helm"}},
			},
			want: classifications,
		},
		"a policy on a user's writes leaves only controllers silent": {
			modules: map[string]string{"mallory.rego": noUpdatesByMallory},
			want:    []Classification{Controller},
		},
		"a policy on the drift of server-side applies leaves the others silent": {
			modules: map[string]string{"drift.rego": driftOnServerSideApply},
			want:    without(ServerSideApply),
		},
		"a policy that binds the whole analysis keeps every classification silent": {
			modules: map[string]string{"whole.rego": wholeAnalysis},
			want:    classifications,
		},
		"a policy that reads the analysis through a default is not silent for its classification": {
			modules: map[string]string{"default.rego": defaultAnalysis},
			want:    without(SaveConfig),
		},
		"a policy that reads the clock is silent for nothing": {
			modules: map[string]string{"sundays.rego": sundays},
		},
		"a policy on namespace labels leaves the classifications it ignores silent": {
			modules: map[string]string{"no-edit-in-prod.rego": noEditInProd},
			want:    without(Imperative, Scale),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t, WithModules(tc.modules), WithConfig(tc.config))
			if diff := cmp.Diff(tc.want, e.Status().Silent); diff != "" {
				t.Errorf("silent classifications (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFullEvaluationIsSilentForNothing(t *testing.T) {
	e := newEngine(t, WithFullEvaluation())
	if got := e.Status().Silent; len(got) != 0 {
		t.Errorf("Status().Silent = %v with WithFullEvaluation, want none", got)
	}
}

// Every field of the analysis is either checked by emptyAnalysis (and
// known in the partial evaluation) or unknown there: a new field must be
// added to one of them.
func TestEmptyAnalysisCoversEveryField(t *testing.T) {
	checked := []string{"lastApplied.status", "lastApplied.error", "lastApplied.fault", "lastApplied.kubectlMade", "lastAppliedTooLarge",
		"imperativeChanges", "applyOwnedChanges", "appliers", "reverts", "orphans", "defaultedDependents", "replicasReset", "rollback", "handOver", "droppedRecord"}
	unknown := []string{"object", "operation", "strategy", "lastApplied.bytes", "lastApplied.replaced", "annotationsBytes", "drift"}
	var fields []string
	for name, typ := range map[string]reflect.Type{"": reflect.TypeFor[merge.Analysis](), "lastApplied.": reflect.TypeFor[merge.LastAppliedInfo]()} {
		for f := range typ.Fields() {
			key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if key == "-" {
				continue // not part of the policy input (Labels)
			}
			if key != "lastApplied" || name != "" {
				fields = append(fields, name+key)
			}
		}
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(append(slices.Clone(checked), unknown...))), slices.Sorted(slices.Values(fields))); diff != "" {
		t.Errorf("analysis fields (-checked and unknown +merge.Analysis):\n%s", diff)
	}
	want := []string{"input.request", "input.namespace"}
	for _, u := range unknown {
		want = append(want, "input.analysis."+u)
	}
	got := silentShapes[len(silentShapes)-1].unknowns
	if diff := cmp.Diff(slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(got))); diff != "" {
		t.Errorf("unknowns of the empty analysis (-want +got):\n%s", diff)
	}
}
