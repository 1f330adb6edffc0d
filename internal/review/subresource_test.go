package review

import (
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// A write to a subresource other than /scale is no write of the object:
// the API server keeps from it all but the subresource's own fields (a
// /status write keeps the stored spec, a custom resource's its metadata
// too), and an Apply entry of the subresource is no configuration of the
// object. The core has no opinion on it (a review of nil, as for a
// controller's write), whoever sends it and whatever its pass: judged as
// the object's own write, kubectl apply --server-side --subresource=status
// was a server-side apply of the object's configuration, warned of the
// orphans of the earlier apply and, with prune, had the mutating pass
// remove one in a request whose spec the API server throws away.
func TestSubresourceWritesAreNotReviewed(t *testing.T) {
	const dir = "status-apply"
	person := authenticationv1.UserInfo{Username: "alice", Groups: []string{"system:authenticated"}}
	prune := policy.Config{Rules: map[string]policy.RuleConfig{string(policy.RuleOrphanedField): {Action: policy.ActionPrune}}}
	tests := map[string]struct {
		subresource, manager string
		user                 authenticationv1.UserInfo
		pass                 Pass
		cfg                  policy.Config
	}{
		"kubectl apply --server-side --subresource=status, validating pass": {
			subresource: "status", manager: "kubectl", user: person, pass: Validate},
		"kubectl apply --server-side --subresource=status, mutating pass with orphaned-field prune": {
			subresource: "status", manager: "kubectl", user: person, pass: Mutate, cfg: prune},
		"kubectl edit --subresource=status": {
			subresource: "status", manager: "kubectl-edit", user: person, pass: Validate},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := NewReviewer(nil, engine(t, tc.cfg), cluster{})
			u := Update{Subresource: tc.subresource, FieldManager: tc.manager, User: tc.user,
				Old: fixture(t, dir, "old"), New: fixture(t, dir, "applied")}
			rv, err := r.ReviewUpdate(t.Context(), u, tc.pass)
			if err != nil {
				t.Fatal(err)
			}
			if rv != nil {
				t.Errorf("reviewed as %q with decisions %v; want no review", rv.Input.Classification, decisionsOf(rv))
			}
		})
	}
}
