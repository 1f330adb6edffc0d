package review

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// revisionsCluster is a cluster whose objects have revisions.
type revisionsCluster struct {
	cluster
	revisions []*unstructured.Unstructured
}

func (c revisionsCluster) Revisions(context.Context, *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return c.revisions, nil
}

// fixtureObjects reads the objects of a multi-document fixture.
func fixtureObjects(t *testing.T, dir, name string) []*unstructured.Unstructured {
	t.Helper()
	raw, err := fixtures.ReadFile("testdata/" + dir + "/" + name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		out = append(out, object(t, doc))
	}
	return out
}

// renamedManager returns obj with the managedFields entries of manager
// from renamed to manager to.
func renamedManager(obj *unstructured.Unstructured, from, to string) *unstructured.Unstructured {
	entries := obj.GetManagedFields()
	for i := range entries {
		if entries[i].Manager == from {
			entries[i].Manager = to
		}
	}
	obj.SetManagedFields(entries)
	return obj
}

// undoOutcome is what a review decided about a write that may be an undo.
type undoOutcome struct {
	Class     policy.Classification
	Confirmed bool
	Repaired  bool
	// Decisions are "action rule", sorted.
	Decisions []string
}

// outcomeOf is what rv decided about a write that may be an undo.
func outcomeOf(rv *Review) undoOutcome {
	got := undoOutcome{Class: rv.Classification()}
	if rb := rv.Input.Analysis.Rollback; rb != nil {
		got.Confirmed, got.Repaired = rb.Confirmed, rb.RepairedLastApplied != ""
	}
	got.Decisions = actionRules(rv)
	slices.Sort(got.Decisions)
	return got
}

// actionRules are rv's decisions as "action rule", in their order.
func actionRules(rv *Review) []string {
	var out []string
	for _, d := range rv.Decisions {
		out = append(out, string(d.Action)+" "+string(d.Rule))
	}
	return out
}

// An older kubectl (1.32 against a 1.37 server) decodes the ReplicaSet
// into its own types in rollout undo, so the template it restores lacks
// the fields newer than it (hostnameOverride, GA in 1.37) and matches no
// revision exactly. Under a renamed binary's manager (kubectl.1.32), with
// the undo's own entry moved, such an undo was denied as an imperative
// edit: a template that is a revision's less some fields is an unconfirmed
// undo whatever the manager's name (warned about, never denied nor
// repaired). Another tool's write that removes a field from the current
// template is no such undo: the revision it is a subset of is the one the
// object already had. Under a kubectl binary's name it may be one
// (merge.MayBeUndoManager): only rollout undo writes a template without a
// field manager there.
func TestUndoByOlderKubectlDroppingFieldsIsAnUnconfirmedUndo(t *testing.T) {
	const dir = "undo-older-kubectl"
	tests := map[string]struct {
		new  *unstructured.Unstructured
		want undoOutcome
	}{
		"kubectl 1.32 renamed kubectl.1.32 restores revision 1 without hostnameOverride": {
			new:  fixture(t, dir, "undo-dropping-fields"),
			want: undoOutcome{Class: policy.RolloutUndo, Decisions: []string{"warn stale-last-applied"}},
		},
		"kubectl 1.32 as kubectl restores revision 1 without hostnameOverride": {
			new:  renamedManager(fixture(t, dir, "undo-dropping-fields"), "kubectl.1.32", "kubectl"),
			want: undoOutcome{Class: policy.RolloutUndo, Decisions: []string{"warn stale-last-applied"}},
		},
		// Only rollout undo writes a template without a field manager under
		// a kubectl binary's name: unconfirmed, it is warned about, never
		// denied on a guess.
		"a write under kubectl.1.32 removes hostnameOverride from the current template": {
			new:  fixture(t, dir, "removed-field"),
			want: undoOutcome{Class: policy.RolloutUndo, Decisions: []string{"warn stale-last-applied"}},
		},
		"another tool's write removes hostnameOverride from the current template": {
			new:  renamedManager(fixture(t, dir, "removed-field"), "kubectl.1.32", "k9s"),
			want: undoOutcome{Class: policy.Imperative, Decisions: []string{"deny imperative-edit"}},
		},
		"kubectl.1.32 restores revision 1 exactly": {
			new:  fixture(t, dir, "undo-exact"),
			want: undoOutcome{Class: policy.RolloutUndo, Confirmed: true, Repaired: true, Decisions: []string{"repair stale-last-applied"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := NewReviewer(nil, engine(t, policy.Config{}), revisionsCluster{revisions: fixtureObjects(t, dir, "revisions")})
			rv, err := r.ReviewUpdate(t.Context(), Update{User: authenticationv1.UserInfo{Username: "alice"}, Old: fixture(t, dir, "old"), New: tc.new}, Validate)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, outcomeOf(rv)); diff != "" {
				t.Errorf("review (-want +got):\n%s", diff)
			}
			if tc.want.Repaired {
				return
			}
			mutated, err := r.ReviewUpdate(t.Context(), Update{User: authenticationv1.UserInfo{Username: "alice"}, Old: fixture(t, dir, "old"), New: tc.new}, Mutate)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range mutated.Decisions {
				if len(d.Patch) > 0 {
					t.Errorf("the mutating pass patched the write: %v", d)
				}
			}
		})
	}
}
