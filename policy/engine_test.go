package policy

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// summary renders decisions as "rule=action" for tests that check only
// which rules fired and how.
func summary(ds []Decision) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, string(d.Rule)+"="+string(d.Action))
	}
	return out
}

func TestEvaluateConfig(t *testing.T) {
	sa := User{Username: "system:serviceaccount:ci:deployer", Groups: []string{"system:serviceaccounts"}, ServiceAccount: true}
	tests := map[string]struct {
		fixture string
		config  Config
		mutate  func(*Input)
		want    []string
	}{
		"a person's edit is denied by default": {
			fixture: "imperative", want: []string{"imperative-edit=deny"},
		},
		"a service account's edit is warned": {
			fixture: "imperative", mutate: func(in *Input) { in.Request.User = sa }, want: []string{"imperative-edit=warn"},
		},
		"a break-glass member's edit is warned": {
			fixture: "imperative",
			config:  Config{BreakGlassGroups: []string{"sre"}},
			mutate:  func(in *Input) { in.Request.User.Groups = append(in.Request.User.Groups, "sre") },
			want:    []string{"imperative-edit=warn"},
		},
		"an exempt user gets no decision": {
			fixture: "imperative", config: Config{Exemptions: Exemptions{Users: []string{"alice"}}}, want: []string{},
		},
		"an exempt service account gets no decision": {
			fixture: "imperative",
			config:  Config{Exemptions: Exemptions{ServiceAccounts: []string{"ci/deployer"}}},
			mutate:  func(in *Input) { in.Request.User = sa },
			want:    []string{},
		},
		"a write by an exempt field manager gets no decision": {
			fixture: "imperative",
			config:  Config{Exemptions: Exemptions{FieldManagers: []string{"helm"}}},
			mutate:  func(in *Input) { in.Request.FieldManager = "helm" },
			want:    []string{},
		},
		"a field manager not listed is not exempt": {
			fixture: "imperative", config: Config{Exemptions: Exemptions{FieldManagers: []string{"helm"}}},
			want: []string{"imperative-edit=deny"},
		},
		"a service account's apply dropping replicas is warned": {
			fixture: "replicas-reset", mutate: func(in *Input) { in.Request.User = sa }, want: []string{"replicas-reset=warn"},
		},
		"a namespace labelled warn turns deny into warn": {
			fixture: "replicas-reset", mutate: labelNamespace("warn"), want: []string{"replicas-reset=warn"},
		},
		"a namespace labelled dryrun makes every action dryrun": {
			fixture: "rollout-undo", mutate: labelNamespace("dryrun"), want: []string{"stale-last-applied=dryrun"},
		},
		"a namespace labelled off gets no decision": {
			fixture: "imperative", mutate: labelNamespace("off"), want: []string{},
		},
		"a custom namespace label is honoured": {
			fixture: "imperative",
			config:  Config{NamespaceLabel: "example.com/hygiene"},
			mutate:  func(in *Input) { in.Namespace.Labels = map[string]string{"example.com/hygiene": "warn"} },
			want:    []string{"imperative-edit=warn"},
		},
		"a rule configured off makes no decision": {
			fixture: "imperative", config: Config{Rules: map[string]RuleConfig{"imperative-edit": {Action: ActionOff}}}, want: []string{},
		},
		"orphans are pruned when configured": {
			fixture: "client-side-apply", config: Config{Rules: map[string]RuleConfig{"orphaned-field": {Action: ActionPrune}}},
			want: []string{"orphaned-field=prune"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t, WithConfig(tc.config))
			in := loadInput(t, tc.fixture)
			if tc.mutate != nil {
				tc.mutate(in)
			}
			got, err := e.Evaluate(t.Context(), in)
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if diff := cmp.Diff(tc.want, summary(got)); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}

func labelNamespace(mode string) func(*Input) {
	return func(in *Input) { in.Namespace.Labels[DefaultNamespaceLabel] = mode }
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	_, err := New(t.Context(), WithConfig(Config{
		Rules:      map[string]RuleConfig{"imperative-edit": {Action: "block"}, "orphaned-field": {BreakGlassAction: "nope"}},
		Exemptions: Exemptions{ServiceAccounts: []string{"deployer"}, FieldManagers: []string{""}},
	}))
	for _, want := range []string{`rules[imperative-edit].action: Unsupported value: "block"`, "rules[orphaned-field].breakGlassAction", "exemptions.serviceAccounts[0]", "exemptions.fieldManagers[0]"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New error = %v, want it to contain %q", err, want)
		}
	}
}

// noEditInProd is the user policy of docs/policy-input.md.
const noEditInProd = `package applyhygiene.rules.no_edit_in_prod

import data.applyhygiene.lib

decisions contains lib.decision_or("no-edit-in-prod", "deny", message, []) if {
	input.classification in {"imperative", "scale"}
	input.namespace.labels.env == "prod"
}

message := sprintf("[no-edit-in-prod] %s: namespace %s is labelled env=prod; change the manifest and run kubectl apply", [lib.describe, input.namespace.name])
`

// directDecision adds to data.applyhygiene.decisions directly.
const directDecision = `package applyhygiene

decisions contains {"rule": "tell-alice", "action": "warn", "message": "[tell-alice] hello", "paths": []} if {
	input.request.user.username == "alice"
}
`

func TestUserModules(t *testing.T) {
	tests := map[string]struct {
		modules map[string]string
		config  Config
		labels  map[string]string
		want    []string
	}{
		"a user rule denies edits in prod namespaces": {
			modules: map[string]string{"no-edit-in-prod.rego": noEditInProd},
			labels:  map[string]string{"env": "prod"},
			want:    []string{"imperative-edit=deny", "no-edit-in-prod=deny"},
		},
		"a user rule stays quiet elsewhere": {
			modules: map[string]string{"no-edit-in-prod.rego": noEditInProd},
			labels:  map[string]string{"env": "dev"},
			want:    []string{"imperative-edit=deny"},
		},
		"a user rule follows its configuration": {
			modules: map[string]string{"no-edit-in-prod.rego": noEditInProd},
			config:  Config{Rules: map[string]RuleConfig{"no-edit-in-prod": {Action: ActionWarn}, "imperative-edit": {Action: ActionOff}}},
			labels:  map[string]string{"env": "prod"},
			want:    []string{"no-edit-in-prod=warn"},
		},
		"a module in package applyhygiene adds to decisions directly": {
			modules: map[string]string{"direct.rego": directDecision},
			labels:  map[string]string{},
			want:    []string{"imperative-edit=deny", "tell-alice=warn"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t, WithModules(tc.modules), WithConfig(tc.config))
			in := loadInput(t, "imperative")
			in.Namespace.Labels = tc.labels
			got, err := e.Evaluate(t.Context(), in)
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if diff := cmp.Diff(tc.want, summary(got)); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestForbiddenBuiltinsFailToLoad(t *testing.T) {
	tests := map[string]string{
		"http.send":              `x := http.send({"method": "GET", "url": "http://example.com"})`,
		"net.lookup_ip_addr":     `x := net.lookup_ip_addr("example.com")`,
		"net.cidr_contains":      `x := net.cidr_contains("10.0.0.0/8", "10.1.1.1")`,
		"opa.runtime":            `x := opa.runtime().env`,
		"json.match_schema":      `x := json.match_schema({}, {"$ref": "http://example.com/s.json"})`,
		"providers.aws.sign_req": `x := providers.aws.sign_req({}, {}, 0)`,
	}
	for builtin, rule := range tests {
		t.Run(builtin, func(t *testing.T) {
			src := "package applyhygiene.rules.evil\n\n" + rule + "\n"
			_, err := New(t.Context(), WithModules(map[string]string{"evil.rego": src}))
			var loadErr *LoadError
			if !errors.As(err, &loadErr) {
				t.Fatalf("New error = %v, want a *LoadError", err)
			}
			want := Problem{File: "evil.rego", Line: 3, Message: "rego_type_error: undefined function " + builtin +
				" (apply-hygiene policies may not reach the network, the environment or the runtime)"}
			if diff := cmp.Diff([]Problem{want}, loadErr.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReloadKeepsLastGoodSet(t *testing.T) {
	e := newEngine(t, WithModules(map[string]string{"no-edit-in-prod.rego": noEditInProd}))
	in := loadInput(t, "imperative")
	in.Namespace.Labels = map[string]string{"env": "prod"}
	before, err := e.Evaluate(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}

	err = e.Reload(t.Context(), Sources{Modules: map[string]string{
		"broken.rego": "package applyhygiene.rules.broken\n\nx := {\n",
		"typo.rego":   "package applyhygiene.rules.typo\n\ndecisions contains d if {\n\td := undefined_thing\n}\n",
	}})
	var loadErr *LoadError
	if !errors.As(err, &loadErr) {
		t.Fatalf("Reload error = %v, want a *LoadError", err)
	}
	for _, want := range []string{"broken.rego:4: rego_parse_error", "typo.rego:4: rego_unsafe_var_error"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Reload error = %v, want it to name %q", err, want)
		}
	}
	st := e.Status()
	if st.Version != 1 || st.LastError == nil {
		t.Errorf("Status = %+v, want version 1 and the load error", st)
	}
	after, err := e.Evaluate(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("decisions after a failed reload (-before +after):\n%s", diff)
	}

	if err := e.Reload(t.Context(), Sources{}); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if st := e.Status(); st.Version != 2 || st.LastError != nil || len(st.Modules) != len(mustBundled(t)) {
		t.Errorf("Status = %+v, want version 2, no error, only the bundled modules", st)
	}
	got, err := e.Evaluate(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"imperative-edit=deny"}, summary(got)); diff != "" {
		t.Errorf("decisions after reload (-want +got):\n%s", diff)
	}
}

func mustBundled(t *testing.T) []moduleFile {
	t.Helper()
	files, err := bundledModules(false)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestEvaluateErrors(t *testing.T) {
	tests := map[string]struct {
		module string
		want   string
	}{
		"an unknown action": {
			module: `package applyhygiene

decisions contains {"rule": "x", "action": "block", "message": "m", "paths": []}
`,
			want: `decision of rule "x" has unknown action "block"`,
		},
		"a decision without a rule": {
			module: "package applyhygiene\n\ndecisions contains {\"action\": \"warn\", \"message\": \"m\"}\n",
			want:   "has no rule",
		},
		"a decision without a message": {
			module: "package applyhygiene\n\ndecisions contains {\"rule\": \"x\", \"action\": \"warn\"}\n",
			want:   `decision of rule "x" has no message`,
		},
		"paths that are not strings": {
			module: "package applyhygiene\n\ndecisions contains {\"rule\": \"x\", \"action\": \"warn\", \"message\": \"m\", \"paths\": [1]}\n",
			want:   "path 1 is not a string",
		},
		"a builtin error": {
			module: "package applyhygiene\n\ndecisions contains {\"rule\": \"x\", \"action\": \"warn\", \"message\": m, \"paths\": []} if {\n\tm := sprintf(\"%d\", [input.request.user.username])\n\tto_number(m) > 0\n}\n",
			want:   "evaluating policy set 1",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t, WithModules(map[string]string{"m.rego": tc.module}))
			_, err := e.Evaluate(t.Context(), loadInput(t, "clean-apply"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Evaluate error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestDecisionsOffAreDropped(t *testing.T) {
	e := newEngine(t, WithModules(map[string]string{"m.rego": `package applyhygiene

decisions contains {"rule": "x", "action": "off", "message": "m"}
`}))
	got, err := e.Evaluate(t.Context(), loadInput(t, "clean-apply"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Decision{}, got); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
}

// TestEvaluateWhileReloading runs many evaluations while reloads swap the
// policy set; run it with -race.
func TestEvaluateWhileReloading(t *testing.T) {
	e := newEngine(t)
	in := loadInput(t, "imperative")
	in.Namespace.Labels = map[string]string{"env": "prod"}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 25 {
				got, err := e.Evaluate(t.Context(), in)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 || got[0].Rule != "imperative-edit" {
					t.Errorf("decisions = %v, want imperative-edit first", summary(got))
				}
			}
		})
	}
	for i := range 6 {
		src := Sources{}
		if i%2 == 0 {
			src.Modules = map[string]string{"no-edit-in-prod.rego": noEditInProd}
		}
		if err := e.Reload(t.Context(), src); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if got := e.Status().Version; got != 7 {
		t.Errorf("version = %d, want 7", got)
	}
}
