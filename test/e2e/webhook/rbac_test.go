package webhook_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// The server runs with the chart's RBAC and nothing more: take one rule
// away (list controllerrevisions) and the feature that needs it, repairing
// a StatefulSet's rollout undo, fails loudly — a clear warning naming the
// missing permission, the write allowed as failurePolicy Ignore says —
// and the server keeps running.
func TestMissingRBACRuleFailsLoudly(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	restore := withoutResource(t, f, "controllerrevisions")

	k.Run(t, "apply", "-f", seeds+"seed004-v1.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=my-wonderhoy-app", 1)
	k.Run(t, "apply", "-f", seeds+"seed004-v2.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=my-wonderhoy-app", 2)

	undo := k.Run(t, "rollout", "undo", "statefulset/my-wonderhoy-app", "--to-revision=1").MustSucceed(t)
	want := fmt.Sprintf("Warning: apply-hygiene could not review this request and allowed it (failure policy Ignore): "+
		"listing controllerrevisions of StatefulSet %[1]s/my-wonderhoy-app: controllerrevisions.apps is forbidden: "+
		`User "system:serviceaccount:%[2]s:%[2]s" cannot list resource "controllerrevisions" in API group "apps" in the namespace "%[1]s"`,
		f.Namespace, devenv.Namespace)
	if !slices.Contains(undo.StderrLines(), want) {
		t.Errorf("rollout undo stderr:\n%s\nwant the line:\n%s", undo.Stderr, want)
	}

	// Put the rule back: the same undo story is repaired again, so the
	// server survived the errors.
	restore()
	k.Run(t, "apply", "-f", seeds+"seed004-v2.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=my-wonderhoy-app", 3)
	again := k.Run(t, "rollout", "undo", "statefulset/my-wonderhoy-app").MustSucceed(t)
	if !strings.Contains(again.Stderr, "Warning: [stale-last-applied] ") {
		t.Errorf("after restoring the rule, rollout undo stderr = %q, want the stale-last-applied repair", again.Stderr)
	}
}

// withoutResource removes resource from the chart's ClusterRole until the
// returned function (also run at cleanup) restores it, and waits until the
// API server's authorizer denies it.
func withoutResource(t *testing.T, f *framework.Framework, resource string) func() {
	t.Helper()
	ctx := t.Context()
	roles := f.Client.RbacV1().ClusterRoles()
	list, err := roles.List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + devenv.Release})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("finding the chart's ClusterRole (found %d): %v", len(list.Items), err)
	}
	original := list.Items[0].DeepCopy()
	cut := original.DeepCopy()
	for i, r := range cut.Rules {
		cut.Rules[i].Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(s string) bool { return s == resource })
	}
	cut.Rules = slices.DeleteFunc(cut.Rules, func(r rbacv1.PolicyRule) bool { return len(r.Resources) == 0 })
	if _, err := roles.Update(ctx, cut, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("removing %s from the ClusterRole: %v", resource, err)
	}
	restored := false
	restore := func() {
		if restored {
			return
		}
		restored = true
		cur, err := roles.Get(context.Background(), original.Name, metav1.GetOptions{})
		if err == nil {
			cur.Rules = original.Rules
			_, err = roles.Update(context.Background(), cur, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Errorf("restoring the ClusterRole: %v", err)
		}
		waitForAccess(t, f, resource, true)
	}
	t.Cleanup(restore)
	waitForAccess(t, f, resource, false)
	return restore
}

// waitForAccess waits until the API server's authorizer (which caches
// RBAC objects) answers allowed for the server's service account listing
// resource in the test's namespace.
func waitForAccess(t *testing.T, f *framework.Framework, resource string, allowed bool) {
	t.Helper()
	user := "system:serviceaccount:" + devenv.Namespace + ":" + devenv.Release
	framework.Eventually(t, 30*time.Second, fmt.Sprintf("%s may list %s: %v", user, resource, allowed), func(ctx context.Context) (bool, error) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               user,
			Groups:             []string{"system:serviceaccounts"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: f.Namespace, Verb: "list", Group: "apps", Resource: resource},
		}}
		got, err := f.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return got.Status.Allowed == allowed, nil
	})
}
