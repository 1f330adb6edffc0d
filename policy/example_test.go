package policy_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Example evaluates a kubectl edit of a field that last-applied owns, with
// a user policy that adds its own rule, in a namespace labelled warn.
func Example() {
	ctx := context.Background()
	engine, err := policy.New(ctx,
		policy.WithConfig(policy.Config{BreakGlassGroups: []string{"sre"}}),
		policy.WithModules(map[string]string{"no-edit-in-prod.rego": `package applyhygiene.rules.no_edit_in_prod

import data.applyhygiene.lib

decisions contains lib.decision_or("no-edit-in-prod", "deny", msg, []) if {
	input.namespace.labels.env == "prod"
	input.classification == "imperative"
	msg := sprintf("[no-edit-in-prod] %s: use kubectl apply in prod", [lib.describe])
}
`}))
	if err != nil {
		fmt.Println("loading policies:", err)
		return
	}
	path, err := merge.ParsePath("spec.replicas")
	if err != nil {
		fmt.Println(err)
		return
	}
	deployment := merge.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	decisions, err := engine.Evaluate(ctx, &policy.Input{
		Request: policy.Request{
			Operation:    "UPDATE",
			Object:       deployment,
			Resource:     &policy.GroupResource{Group: "apps", Resource: "deployments"},
			User:         policy.User{Username: "alice", Groups: []string{"system:authenticated"}},
			FieldManager: "kubectl-edit",
		},
		Namespace:      policy.Namespace{Name: "shop", Labels: map[string]string{"env": "prod", policy.DefaultNamespaceLabel: "warn"}},
		Classification: policy.Imperative,
		Analysis: &merge.Analysis{
			Object:            deployment,
			Operation:         "update",
			LastApplied:       merge.LastAppliedInfo{Status: merge.LastAppliedPresent},
			ImperativeChanges: []merge.FieldFact{{Path: path, Live: 2, Result: 5, LastApplied: 2}},
		},
	})
	if err != nil {
		fmt.Println("evaluating policies:", err)
		return
	}
	for _, d := range decisions {
		fmt.Println(d.Action, d.Paths, d.Message)
	}
	// Output:
	// warn [spec.replicas] [imperative-edit] Deployment shop/web: this write by alice (field manager kubectl-edit) changes fields that last-applied owns: spec.replicas (last-applied 2, now 5); the next kubectl apply puts the last-applied values back without a word. Put the change in your manifest and run kubectl apply, or hand a field over to its new writer by deleting it from last-applied first with: kubectl hygiene handover deployments.apps/web -n shop spec.replicas
	// warn [] [no-edit-in-prod] Deployment shop/web: use kubectl apply in prod
}

// ExampleEngine_Reload swaps in user policies; a module that does not
// compile is reported by file and line, and the last good set stays.
func ExampleEngine_Reload() {
	ctx := context.Background()
	engine, err := policy.New(ctx)
	if err != nil {
		fmt.Println("loading policies:", err)
		return
	}
	err = engine.Reload(ctx, policy.Sources{Modules: map[string]string{
		"configmap/policies/lookup.rego": "package applyhygiene.rules.lookup\n\naddrs := net.lookup_ip_addr(\"example.com\")\n",
	}})
	var loadErr *policy.LoadError
	if errors.As(err, &loadErr) {
		for _, p := range loadErr.Problems {
			fmt.Println(p)
		}
	}
	st := engine.Status()
	fmt.Println("version", st.Version, "failed:", st.LastError != nil)
	// Output:
	// configmap/policies/lookup.rego:3: rego_type_error: undefined function net.lookup_ip_addr (apply-hygiene policies may not reach the network, the environment or the runtime)
	// version 1 failed: true
}

// ExampleEngine_Skipped shows the shortcut of silent classifications: a
// user policy decides on every kubectl edit by bob, so only imperative
// writes with an empty analysis still run Rego.
func ExampleEngine_Skipped() {
	ctx := context.Background()
	engine, err := policy.New(ctx, policy.WithModules(map[string]string{"no-edit-by-bob.rego": `package applyhygiene.rules.no_edit_by_bob

import data.applyhygiene.lib

decisions contains lib.decision_or("no-edit-by-bob", "deny", "[no-edit-by-bob] bob may not edit", []) if {
	input.classification == "imperative"
	input.request.user.username == "bob"
}
`}))
	if err != nil {
		fmt.Println("loading policies:", err)
		return
	}
	fmt.Println("silent for", engine.Status().Silent)
	for _, class := range []policy.Classification{policy.ServerSideApply, policy.Imperative} {
		decisions, err := engine.Evaluate(ctx, &policy.Input{
			Request:        policy.Request{Operation: "UPDATE", User: policy.User{Username: "bob"}},
			Classification: class,
			Analysis: &merge.Analysis{
				LastApplied:       merge.LastAppliedInfo{Status: merge.LastAppliedPresent},
				ImperativeChanges: []merge.FieldFact{}, ApplyOwnedChanges: []merge.FieldFact{}, Appliers: []merge.Owner{}, Reverts: []merge.FieldFact{},
				Orphans: []merge.FieldFact{}, DefaultedDependents: []merge.FieldFact{},
			},
		})
		if err != nil {
			fmt.Println("evaluating policies:", err)
			return
		}
		fmt.Println(class, len(decisions), "decisions, skipped so far:", engine.Skipped())
	}
	// Output:
	// silent for [client-side-apply server-side-apply rollout-undo rollout-restart scale save-config controller]
	// server-side-apply 0 decisions, skipped so far: 1
	// imperative 1 decisions, skipped so far: 1
}

// Declared lists the fields that the ownership rules declare in an
// object: here an Argo CD entry's replicas, for Deployments only.
func ExampleEngine_Declared() {
	engine, err := policy.New(context.Background(), policy.WithConfig(policy.Config{Ownership: []policy.OwnershipRule{
		{ArgoCD: &policy.ArgoCDIgnoreDifference{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}},
	}}))
	if err != nil {
		fmt.Println("loading policies:", err)
		return
	}
	for _, kind := range []string{"Deployment", "StatefulSet"} {
		an := &merge.Analysis{Object: merge.ObjectRef{APIVersion: "apps/v1", Kind: kind, Namespace: "shop", Name: "web"}}
		for _, d := range engine.Declared(an) {
			fmt.Println(kind, d.Pattern, "owned by", cmp.Or(d.Manager, "the cluster"))
		}
	}
	// Output:
	// Deployment spec.replicas owned by the cluster
}

// ExampleApplyRemedy carries out two prune decisions on one object: each
// patch names its element's index in the object as it is, and the
// removals go from the end of the list backwards.
func ExampleApplyRemedy() {
	obj := map[string]any{"spec": map[string]any{"env": []any{
		map[string]any{"name": "A"}, map[string]any{"name": "X"}, map[string]any{"name": "B"}, map[string]any{"name": "Y"},
	}}}
	decisions := []policy.Decision{
		{Rule: policy.RuleOrphanedField, Action: policy.ActionPrune, Patch: policy.Patch{{Op: policy.OpRemove, Path: "/spec/env/1"}}},
		{Rule: policy.RuleOrphanedField, Action: policy.ActionPrune, Patch: policy.Patch{{Op: policy.OpRemove, Path: "/spec/env/3"}}},
	}
	fixed, err := policy.ApplyRemedy(obj, decisions)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(fixed["spec"])
	// Output:
	// map[env:[map[name:A] map[name:B]]]
}
