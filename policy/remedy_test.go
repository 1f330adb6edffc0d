package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

func TestDecodeDecisionPatch(t *testing.T) {
	tests := map[string]struct {
		patch   string
		want    Patch
		wantErr string
	}{
		"a decision without a patch has none": {
			want: nil,
		},
		"an empty patch is kept empty": {
			patch: `[]`,
			want:  Patch{},
		},
		"the four operations are decoded": {
			patch: `[{"op":"test","path":"/a","value":1},{"op":"add","path":"/b~1c","value":"x"},{"op":"replace","path":"/d/0","value":{"e":true}},{"op":"remove","path":"/f"}]`,
			want: Patch{{Op: OpTest, Path: "/a", Value: json.Number("1")}, {Op: OpAdd, Path: "/b~1c", Value: "x"},
				{Op: OpReplace, Path: "/d/0", Value: map[string]any{"e": true}}, {Op: OpRemove, Path: "/f"}},
		},
		"move is refused": {
			patch:   `[{"op":"move","from":"/a","path":"/b"}]`,
			wantErr: `decision of rule "r": patch operation 0: op move is not one of add, remove, replace, test`,
		},
		"a path in kubectl's notation is refused": {
			patch:   `[{"op":"remove","path":"spec.replicas"}]`,
			wantErr: `decision of rule "r": patch operation 0: remove path "spec.replicas": a JSON pointer starts with /`,
		},
		"a lone ~ is refused": {
			patch:   `[{"op":"remove","path":"/a~2"}]`,
			wantErr: `decision of rule "r": patch operation 0: remove path "/a~2": ~ at 2 is neither ~0 nor ~1`,
		},
		"an add without a value is refused": {
			patch:   `[{"op":"add","path":"/a"}]`,
			wantErr: `decision of rule "r": patch operation 0: add of /a has no value`,
		},
		"managedFields is refused": {
			patch:   `[{"op":"remove","path":"/metadata/managedFields"}]`,
			wantErr: `decision of rule "r": patch operation 0: remove path "/metadata/managedFields": a remedy never writes /metadata/managedFields, which the API server keeps or which names the object`,
		},
		"an entry of managedFields is refused": {
			patch:   `[{"op":"replace","path":"/metadata/managedFields/0/manager","value":"x"}]`,
			wantErr: `decision of rule "r": patch operation 0: replace path "/metadata/managedFields/0/manager": a remedy never writes /metadata/managedFields, which the API server keeps or which names the object`,
		},
		"the resourceVersion is refused": {
			patch:   `[{"op":"replace","path":"/metadata/resourceVersion","value":"1"}]`,
			wantErr: `decision of rule "r": patch operation 0: replace path "/metadata/resourceVersion": a remedy never writes /metadata/resourceVersion, which the API server keeps or which names the object`,
		},
		"the uid is refused": {
			patch:   `[{"op":"remove","path":"/metadata/uid"}]`,
			wantErr: `decision of rule "r": patch operation 0: remove path "/metadata/uid": a remedy never writes /metadata/uid, which the API server keeps or which names the object`,
		},
		"the name is refused": {
			patch:   `[{"op":"replace","path":"/metadata/name","value":"other"}]`,
			wantErr: `decision of rule "r": patch operation 0: replace path "/metadata/name": a remedy never writes /metadata/name, which the API server keeps or which names the object`,
		},
		"the namespace is refused": {
			patch:   `[{"op":"add","path":"/metadata/namespace","value":"other"}]`,
			wantErr: `decision of rule "r": patch operation 0: add path "/metadata/namespace": a remedy never writes /metadata/namespace, which the API server keeps or which names the object`,
		},
		"the generation is refused": {
			patch:   `[{"op":"replace","path":"/metadata/generation","value":1}]`,
			wantErr: `decision of rule "r": patch operation 0: replace path "/metadata/generation": a remedy never writes /metadata/generation, which the API server keeps or which names the object`,
		},
		"the creationTimestamp is refused": {
			patch:   `[{"op":"remove","path":"/metadata/creationTimestamp"}]`,
			wantErr: `decision of rule "r": patch operation 0: remove path "/metadata/creationTimestamp": a remedy never writes /metadata/creationTimestamp, which the API server keeps or which names the object`,
		},
		"the deletionTimestamp is refused": {
			patch:   `[{"op":"remove","path":"/metadata/deletionTimestamp"}]`,
			wantErr: `decision of rule "r": patch operation 0: remove path "/metadata/deletionTimestamp": a remedy never writes /metadata/deletionTimestamp, which the API server keeps or which names the object`,
		},
		"the apiVersion is refused": {
			patch:   `[{"op":"replace","path":"/apiVersion","value":"v2"}]`,
			wantErr: `decision of rule "r": patch operation 0: replace path "/apiVersion": a remedy never writes /apiVersion, which the API server keeps or which names the object`,
		},
		"the kind is refused": {
			patch:   `[{"op":"replace","path":"/kind","value":"Secret"}]`,
			wantErr: `decision of rule "r": patch operation 0: replace path "/kind": a remedy never writes /kind, which the API server keeps or which names the object`,
		},
		"a field of the status is refused": {
			patch:   `[{"op":"remove","path":"/status/replicas"}]`,
			wantErr: `decision of rule "r": patch operation 0: remove path "/status/replicas": a remedy never writes /status, which the API server keeps or which names the object`,
		},
		"metadata as a whole is refused": {
			patch:   `[{"op":"remove","path":"/metadata"}]`,
			wantErr: `decision of rule "r": patch operation 0: remove path "/metadata": a remedy writes the fields of /metadata, never /metadata as a whole`,
		},
		"the top key \"\" is refused": {
			patch:   `[{"op":"add","path":"/","value":{}}]`,
			wantErr: `decision of rule "r": patch operation 0: add path "/": a remedy never writes /, which the API server keeps or which names the object`,
		},
		"a field under the top key \"\" is refused": {
			patch:   `[{"op":"remove","path":"//a"}]`,
			wantErr: `decision of rule "r": patch operation 0: remove path "//a": a remedy never writes /, which the API server keeps or which names the object`,
		},
		"the bundled rules' fields are written": {
			patch: `[{"op":"add","path":"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration","value":"{}"},{"op":"add","path":"/spec/replicas","value":5},{"op":"remove","path":"/metadata/labels/debug"},{"op":"remove","path":"/metadata/annotations/a"},{"op":"add","path":"/metadata/nameSuffix","value":"x"}]`,
			want: Patch{{Op: OpAdd, Path: "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration", Value: "{}"},
				{Op: OpAdd, Path: "/spec/replicas", Value: json.Number("5")}, {Op: OpRemove, Path: "/metadata/labels/debug"},
				{Op: OpRemove, Path: "/metadata/annotations/a"}, {Op: OpAdd, Path: "/metadata/nameSuffix", Value: "x"}},
		},
		"a test reads any field": {
			patch: `[{"op":"test","path":"/metadata/resourceVersion","value":"7"}]`,
			want:  Patch{{Op: OpTest, Path: "/metadata/resourceVersion", Value: "7"}},
		},
		"a patch that is not a list is refused": {
			patch:   `{"op":"add"}`,
			wantErr: `decision of rule "r": patch is a map[string]interface {}, not an array`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			item := map[string]any{"rule": "r", "action": "prune", "message": "[r] m"}
			if tc.patch != "" {
				dec := json.NewDecoder(strings.NewReader(tc.patch))
				dec.UseNumber()
				var v any
				if err := dec.Decode(&v); err != nil {
					t.Fatal(err)
				}
				item["patch"] = v
			}
			d, err := decodeDecision(item)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("decodeDecision error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("decodeDecision: %v", err)
			}
			if diff := cmp.Diff(tc.want, d.Patch); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyRemedy(t *testing.T) {
	env := func(names ...string) []any {
		out := []any{}
		for _, n := range names {
			out = append(out, map[string]any{"name": n, "value": "v"})
		}
		return out
	}
	object := func(names ...string) map[string]any {
		return map[string]any{"kind": "Deployment", "spec": map[string]any{"replicas": int64(1), "env": env(names...)}}
	}
	remove := func(rule RuleID, action Action, ptr string) Decision {
		return Decision{Rule: rule, Action: action, Patch: Patch{{Op: OpRemove, Path: ptr}}}
	}
	tests := map[string]struct {
		decisions []Decision
		want      map[string]any
		wantErr   string
	}{
		"two orphaned elements of one list go, lower index first in the decisions": {
			decisions: []Decision{remove(RuleOrphanedField, ActionPrune, "/spec/env/1"), remove(RuleOrphanedField, ActionPrune, "/spec/env/3")},
			want:      object("a", "c", "e"),
		},
		"a field two decisions remove is removed once": {
			decisions: []Decision{remove(RuleOrphanedField, ActionPrune, "/spec/env/1"), remove(RuleDefaultedDependent, ActionRepair, "/spec/env/1")},
			want:      object("a", "c", "d", "e"),
		},
		"a field and one inside it both go": {
			decisions: []Decision{remove(RuleOrphanedField, ActionPrune, "/spec/env"), remove(RuleOrphanedField, ActionPrune, "/spec/env/0/value")},
			want:      map[string]any{"kind": "Deployment", "spec": map[string]any{"replicas": int64(1)}},
		},
		"an add writes the count and a warning's patch is not carried out": {
			decisions: []Decision{{Rule: RuleReplicasReset, Action: ActionRepair, Patch: Patch{{Op: OpAdd, Path: "/spec/replicas", Value: json.Number("5")}}},
				remove(RuleOrphanedField, ActionWarn, "/spec/env/0")},
			want: map[string]any{"kind": "Deployment", "spec": map[string]any{"replicas": int64(5), "env": env("a", "b", "c", "d", "e")}},
		},
		"an empty patch changes nothing": {
			decisions: []Decision{{Rule: RuleOrphanedField, Action: ActionPrune, Patch: Patch{}}},
			want:      object("a", "b", "c", "d", "e"),
		},
		"a prune without a patch is an error": {
			decisions: []Decision{{Rule: "user-rule", Action: ActionPrune}},
			wantErr:   "rule user-rule asked for prune, which apply-hygiene cannot carry out for it: its decision has no patch",
		},
		"a failed test changes nothing": {
			decisions: []Decision{{Rule: "user-rule", Action: ActionRepair, Patch: Patch{{Op: OpTest, Path: "/spec/replicas", Value: 2}, {Op: OpRemove, Path: "/spec/env"}}}},
			wantErr:   "applying the patch: testing value /spec/replicas failed: test failed",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := object("a", "b", "c", "d", "e")
			got, err := ApplyRemedy(obj, tc.decisions)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("ApplyRemedy error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ApplyRemedy: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("object (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(object("a", "b", "c", "d", "e"), obj); diff != "" {
				t.Errorf("ApplyRemedy changed its argument (-want +got):\n%s", diff)
			}
		})
	}
}

// noDebugInProd is the user policy with a remedy of docs/policy-input.md.
const noDebugInProd = `package applyhygiene.rules.no_debug_in_prod

import data.applyhygiene.lib

# prune by default; configurable as rules["no-debug-in-prod"]
decisions contains object.union(d, {"patch": lib.remove(o)}) if {
	input.classification in {"client-side-apply", "server-side-apply"}
	input.namespace.labels.env == "prod"
	some o in lib.analysis.orphans
	o.path == "metadata.labels.debug"
	d := lib.decision_or("no-debug-in-prod", "prune", message, [o.path])
}

message := sprintf("[no-debug-in-prod] %s: namespace %s is labelled env=prod; apply-hygiene removes the debug label in this request", [lib.describe, input.namespace.name])
`

// A user's own policy ships its remedy as the bundled rules do: its
// prune decision's patch is carried out, and nothing in Go names its rule.
func TestUserPolicyShipsARemedy(t *testing.T) {
	tests := map[string]struct {
		config Config
		want   map[string]any
	}{
		"the prune removes the label": {
			want: map[string]any{"app": "web"},
		},
		"configured to warn, its patch is not carried out": {
			config: Config{Rules: map[string]RuleConfig{"no-debug-in-prod": {Action: ActionWarn}}},
			want:   map[string]any{"app": "web", "debug": "true"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t, WithModules(map[string]string{"no-debug-in-prod.rego": noDebugInProd}), WithConfig(tc.config))
			in := loadInput(t, "client-side-apply")
			in.Namespace.Labels = map[string]string{"env": "prod"}
			debug, err := merge.ParsePath("metadata.labels.debug")
			if err != nil {
				t.Fatal(err)
			}
			in.Analysis.Orphans = []merge.FieldFact{{Path: debug, Live: "true", Pointer: "/metadata/labels/debug"}}
			ds, err := e.Evaluate(t.Context(), in)
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			var mine []Decision
			for _, d := range ds {
				if d.Rule == "no-debug-in-prod" {
					mine = append(mine, d)
				}
			}
			if len(mine) != 1 {
				t.Fatalf("decisions of no-debug-in-prod = %+v, want one", mine)
			}
			if diff := cmp.Diff(Patch{{Op: OpRemove, Path: "/metadata/labels/debug"}}, mine[0].Patch); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
			obj := map[string]any{"kind": "Deployment", "metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web", "debug": "true"}}}
			got, err := ApplyRemedy(obj, mine)
			if err != nil {
				t.Fatalf("ApplyRemedy: %v", err)
			}
			if diff := cmp.Diff(tc.want, got["metadata"].(map[string]any)["labels"]); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}
