package review

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// invalid-last-applied judges the annotation a write leaves: a write that
// removes an unusable one, or puts a usable one in its place, leaves
// nothing for kubectl apply to compute wrong deletions from, and the rule
// told to rewrite an annotation that no longer exists (kubectl annotate
// …last-applied-configuration-, the clean-up the rule's own message
// suggests the alternative to). A write that leaves it is still warned
// about.
func TestInvalidLastAppliedIsJudgedAsTheWriteLeavesIt(t *testing.T) {
	const dir = "invalid-last-applied-writes"
	tests := map[string]struct {
		manager, new string
		want         []policy.RuleID
	}{
		"kubectl annotate removes it":                 {manager: "kubectl-annotate", new: "removed"},
		"kubectl edit puts a usable one in its place": {manager: "kubectl-edit", new: "edited"},
		"kubectl label leaves it":                     {manager: "kubectl-label", new: "labeled", want: []policy.RuleID{policy.RuleInvalidLastApplied}},
	}
	r := NewReviewer(nil, engine(t, policy.Config{}), cluster{})
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			u := Update{FieldManager: tc.manager, User: authenticationv1.UserInfo{Username: "alice"}, Old: fixture(t, dir, "old"), New: fixture(t, dir, tc.new)}
			rv, err := r.ReviewUpdate(t.Context(), u, Validate)
			if err != nil {
				t.Fatal(err)
			}
			wantRules(t, rv, tc.want)
		})
	}
}

// kubectl apply never reads the previous manifest's apiVersion or kind
// (kubectl patcher.go hands the annotation to the three-way patch as it
// is): an apply over a last-applied without them is reviewed as over a
// whole one, and only one that names another kind is invalid.
func TestApplyOverLastAppliedWithoutKindIsReviewedAsKubectlComputesIt(t *testing.T) {
	const dir = "replicas-reset-widget"
	tests := map[string]struct {
		live string
		want []policy.RuleID
	}{
		"a whole last-applied":                      {live: "live", want: []policy.RuleID{policy.RuleReplicasReset}},
		"a last-applied without apiVersion or kind": {live: "live-without-kind", want: []policy.RuleID{policy.RuleReplicasReset}},
		"another kind's last-applied":               {live: "live-of-another-kind", want: []policy.RuleID{policy.RuleInvalidLastApplied}},
	}
	r := NewReviewer(nil, engine(t, policy.Config{}), cluster{})
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rv, err := r.ReviewUpdate(t.Context(), apply(fixture(t, dir, tc.live), fixture(t, dir, "applied")), Validate)
			if err != nil {
				t.Fatal(err)
			}
			wantRules(t, rv, tc.want)
		})
	}
}

// wantRules checks the rules of rv's decisions, in order, against want.
func wantRules(t *testing.T, rv *Review, want []policy.RuleID) {
	t.Helper()
	var got []policy.RuleID
	for _, d := range rv.Decisions {
		got = append(got, d.Rule)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
}
