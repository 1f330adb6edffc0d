package judge

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Webhooks answers the UPDATEs that diff predicts as apply-hygiene's
// webhooks answer them: through the review core (internal/review), which
// classifies, analyzes and evaluates, so that diff has no rules of its own
// about which writes are applies.
type Webhooks struct {
	reviewer *review.Reviewer
	// resource maps an object to its resource (Judge.resource).
	resource func(obj *unstructured.Unstructured) schema.GroupVersionResource
	// user is who sends the apply: the Judge's user.
	user authenticationv1.UserInfo
}

// Webhooks returns the webhooks with the Judge's engine, user and
// namespace labels, analyzing with analyzer.
func (j *Judge) Webhooks(analyzer *merge.Analyzer) *Webhooks {
	return &Webhooks{
		reviewer: review.NewReviewer(analyzer, j.Engine, judgeCluster{j: j}),
		resource: j.resource,
		user:     authenticationv1.UserInfo{Username: j.User.Username, Groups: j.User.Groups},
	}
}

// Apply returns the decisions admission acts on for the UPDATE that
// `kubectl apply` sends to turn live into result: kubectl's client-side
// apply field manager, the Judge's user, not a dry run. The API server
// calls the mutating webhook first and the validating webhook with the
// object as the mutating one left it, so the decisions are the repair and
// prune decisions of the mutating pass, then the deny, warn and dryrun
// decisions of the validating pass, sorted as the engine sorts them; not
// the quiet ones, which kubectl does not print (policy.Spoken). Writes the
// review core does not review give none.
func (a *Webhooks) Apply(ctx context.Context, live, result *unstructured.Unstructured) ([]policy.Decision, error) {
	u := review.Update{FieldManager: merge.ClientSideApplyManager, Resource: a.resource(live), User: a.user, Old: live, New: result}
	admitted, err := a.reviewer.Admit(ctx, u)
	if err != nil {
		return nil, err
	}
	decisions := policy.Spoken(admitted.Decisions())
	policy.SortDecisions(decisions)
	return decisions, nil
}

// Reviewed reports whether the API server sends the installed chart's
// webhooks the UPDATE of live to result (cluster.WebhookScope.Reviews):
// true when the scope is unknown (offline, or the configuration cannot be
// read), so that diff then predicts what the webhooks would answer.
func (j *Judge) Reviewed(ctx context.Context, live, result *unstructured.Unstructured) bool {
	return j.Scope == nil || j.Scope.Reviews(ctx, live, result, j.resource(live))
}

// judgeCluster is the review core's view of the cluster from diff: the
// Judge's namespace labels. A client-side apply never needs the parent of
// a /scale request nor the revisions of a rollout undo (kubectl sends a
// field manager with it, so it is never an undo candidate).
type judgeCluster struct{ j *Judge }

var _ review.Cluster = judgeCluster{}

func (judgeCluster) Object(_ context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	return nil, fmt.Errorf("reading %s %s/%s: diff predicts no write of a subresource", gvr.Resource, namespace, name)
}

func (judgeCluster) Revisions(context.Context, *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return nil, nil
}

func (c judgeCluster) NamespaceLabels(ctx context.Context, name string) (map[string]string, error) {
	return c.j.namespaceLabels(ctx, name), nil
}
