package review_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// holdManifest is the manifest of Deployment shop/web, with a finalizer.
const holdManifest = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"finalizers":["example.com/hold"],"labels":{"app":"web"},"name":"web","namespace":"shop"},` +
	`"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1.27","name":"nginx"}]}}}}`

// heldWeb is Deployment shop/web as applied from holdManifest; deleting
// adds the deletionTimestamp that kubectl delete leaves on it while the
// finalizer holds it.
func heldWeb(t *testing.T, deleting bool) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON([]byte(holdManifest)); err != nil {
		t.Fatal(err)
	}
	obj.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": holdManifest})
	if deleting {
		obj.Object["metadata"].(map[string]any)["deletionTimestamp"] = "2026-11-26T14:00:00Z"
		obj.SetDeletionGracePeriodSeconds(new(int64))
	}
	return obj
}

func withoutFinalizers(obj *unstructured.Unstructured) *unstructured.Unstructured {
	c := obj.DeepCopy()
	c.SetFinalizers(nil)
	return c
}

func withLabel(obj *unstructured.Unstructured) *unstructured.Unstructured {
	c := obj.DeepCopy()
	c.SetLabels(map[string]string{"app": "web", "team": "a"})
	return c
}

// Nothing is said about a write to an object being deleted: it has no
// next apply, and a person or a controller removing a finalizer lets the
// deletion finish. The same writes to an object that is not being deleted
// are reviewed as usual.
func TestWritesToAnObjectBeingDeletedAreNotReviewed(t *testing.T) {
	engine, err := policy.New(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r := review.NewReviewer(nil, engine, noCluster{})
	person := authenticationv1.UserInfo{Username: "alice", Groups: []string{"system:authenticated"}}
	operator := authenticationv1.UserInfo{Username: "system:serviceaccount:shop:operator", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:shop"}}
	tests := map[string]struct {
		deleting bool
		manager  string
		user     authenticationv1.UserInfo
		change   func(*unstructured.Unstructured) *unstructured.Unstructured
		want     []string
	}{
		"a person removes the finalizer of a deleting object with kubectl patch": {
			deleting: true, manager: "kubectl-patch", user: person, change: withoutFinalizers},
		"a person removes the finalizer of a deleting object with kubectl edit": {
			deleting: true, manager: "kubectl-edit", user: person, change: withoutFinalizers},
		"a service account removes the finalizer of a deleting object": {
			deleting: true, manager: "operator", user: operator, change: withoutFinalizers},
		"a person labels a deleting object": {
			deleting: true, manager: "kubectl-label", user: person, change: withLabel},
		"a person removes the finalizer of an object that is not being deleted": {
			manager: "kubectl-patch", user: person, change: withoutFinalizers, want: []string{"imperative-edit deny"}},
		"a service account removes the finalizer of an object that is not being deleted": {
			manager: "operator", user: operator, change: withoutFinalizers, want: []string{"imperative-edit warn"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old := heldWeb(t, tc.deleting)
			for _, pass := range []review.Pass{review.Mutate, review.Validate} {
				rv, err := r.ReviewUpdate(t.Context(), review.Update{FieldManager: tc.manager, User: tc.user, Old: old, New: tc.change(old)}, pass)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				if rv != nil {
					for _, d := range rv.Decisions {
						got = append(got, string(d.Rule)+" "+string(d.Action))
					}
				}
				if pass == review.Mutate {
					if got != nil {
						t.Errorf("mutating pass decided %v", got)
					}
					continue
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("decisions mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
}
