package review

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// listedRevisions is a cluster whose revisions a kube.Cluster lists from
// objects, as the webhook's does from the API server.
type listedRevisions struct {
	cluster
	kube *kube.Cluster
}

func (c listedRevisions) Revisions(ctx context.Context, obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return c.kube.Revisions(ctx, obj)
}

// listing returns a listedRevisions over objects.
func listing(objects []*unstructured.Unstructured) listedRevisions {
	objs := make([]runtime.Object, len(objects))
	for i, o := range objects {
		objs[i] = o
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		{Group: "apps", Version: "v1", Resource: "replicasets"}:         "ReplicaSetList",
		{Group: "apps", Version: "v1", Resource: "controllerrevisions"}: "ControllerRevisionList",
	}, objs...)
	return listedRevisions{kube: kube.NewCluster(client, 0)}
}

// `kubectl argo rollouts undo` of an Argo Rollout (a kind users add to
// extraKinds) replaces its template with a ReplicaSet's less
// rollouts-pod-template-hash, without field manager, under
// kubectl-argo-rollouts: an exact restore of one of the Rollout's
// ReplicaSets is a confirmed undo, as kubectl rollout undo of a
// Deployment is, and was denied as an [imperative-edit] of the image that
// last-applied owns (docs/reliability.md, finding 34). Unlike a
// Deployment's, it is not repaired: the ReplicaSet's template holds what
// Argo Rollouts and the API server added to the Rollout's, so no
// restored value is proven a manifest's; the rule warns instead. The
// revisions are listed as the webhook lists them (kube.Cluster), which
// listed only ControllerRevisions for a Rollout.
func TestUndoOfARollout(t *testing.T) {
	tests := map[string]struct {
		dir       string
		old, new  *unstructured.Unstructured
		want      undoOutcome
		unpatched bool
	}{
		"kubectl rollout undo of a Deployment to revision 1": {
			dir:  "undo-older-kubectl",
			old:  fixture(t, "undo-older-kubectl", "old"),
			new:  renamedManager(fixture(t, "undo-older-kubectl", "undo-exact"), "kubectl.1.32", "kubectl"),
			want: undoOutcome{Class: policy.RolloutUndo, Confirmed: true, Repaired: true, Decisions: []string{"repair stale-last-applied"}},
		},
		"kubectl argo rollouts undo of a Rollout to revision 1": {
			dir:       "rollout-undo",
			old:       fixture(t, "rollout-undo", "old"),
			new:       fixture(t, "rollout-undo", "undo"),
			want:      undoOutcome{Class: policy.RolloutUndo, Confirmed: true, Decisions: []string{"warn stale-last-applied"}},
			unpatched: true,
		},
		// A pod field newer than the Rollout's CRD, which the schema
		// prunes from the restored template: it matches no revision
		// exactly.
		"kubectl argo rollouts undo of a Rollout whose CRD prunes a field": {
			dir:       "rollout-undo",
			old:       fixture(t, "rollout-undo", "old"),
			new:       withoutField(fixture(t, "rollout-undo", "undo"), "spec", "template", "spec", "schedulerName"),
			want:      undoOutcome{Class: policy.RolloutUndo, Decisions: []string{"warn stale-last-applied"}},
			unpatched: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := NewReviewer(nil, engine(t, policy.Config{}), listing(fixtureObjects(t, tc.dir, "revisions")))
			update := Update{User: authenticationv1.UserInfo{Username: "alice"}, Old: tc.old, New: tc.new}
			rv, err := r.ReviewUpdate(t.Context(), update, Validate)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, outcomeOf(rv)); diff != "" {
				t.Errorf("review (-want +got):\n%s", diff)
			}
			if !tc.unpatched {
				return
			}
			mutated, err := r.ReviewUpdate(t.Context(), update, Mutate)
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

// withoutField is obj without the field at path.
func withoutField(obj *unstructured.Unstructured, path ...string) *unstructured.Unstructured {
	unstructured.RemoveNestedField(obj.Object, path...)
	return obj
}
