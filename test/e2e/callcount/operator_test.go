package callcount_test

import (
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// operatorName is the service account of the simulated controller: an
// operator in the test's namespace, not in kube-system, so the chart's
// not-a-controller condition does not keep its writes away.
const operatorName = "operator"

// operatorClient creates the operator's service account and role (its
// leader-election ConfigMap, its token Secret, the Ingress status it
// reports) and returns a client-go client with its token. Like most
// controllers it names no field manager; the API server records it as
// "operator" from the user agent.
func operatorClient(t *testing.T, f *framework.Framework) kubernetes.Interface {
	t.Helper()
	ctx := t.Context()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: operatorName}}
	if _, err := f.Client.CoreV1().ServiceAccounts(f.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating service account %s: %v", operatorName, err)
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: operatorName},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}, Verbs: []string{"create", "get", "update"}},
			{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses/status"}, Verbs: []string{"get", "update"}},
			{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: []string{"get"}},
		},
	}
	if _, err := f.Client.RbacV1().Roles(f.Namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating role %s: %v", operatorName, err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: operatorName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: operatorName},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: operatorName, Namespace: f.Namespace}},
	}
	if _, err := f.Client.RbacV1().RoleBindings(f.Namespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatalf("binding role %s: %v", operatorName, err)
	}
	tok, err := f.Client.CoreV1().ServiceAccounts(f.Namespace).CreateToken(ctx, operatorName, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a token for %s: %v", operatorName, err)
	}
	cp := framework.ControlPlane(t)
	cfg := &rest.Config{
		Host:            cp.Server(),
		BearerToken:     tok.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.CAPEM()},
		UserAgent:       operatorName + "/v1",
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("creating the operator's client: %v", err)
	}
	return client
}
