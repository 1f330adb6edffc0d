package framework

import (
	"os"
	"path/filepath"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Grant binds the cluster role to subject in the test's namespace.
func (f *Framework) Grant(t *testing.T, clusterRole string, subject rbacv1.Subject) {
	t.Helper()
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{GenerateName: clusterRole + "-"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{subject},
	}
	if _, err := f.Client.RbacV1().RoleBindings(f.Namespace).Create(t.Context(), rb, metav1.CreateOptions{}); err != nil {
		t.Fatalf("binding %s to %s %s: %v", clusterRole, subject.Kind, subject.Name, err)
	}
}

// KubectlAsServiceAccount creates the service account name in the test's
// namespace with the edit role there, and returns kubectl with a token of
// it.
func (f *Framework) KubectlAsServiceAccount(t *testing.T, name string) Kubectl {
	t.Helper()
	return f.KubectlAsServiceAccountIn(t, f.Namespace, name)
}

// KubectlAsServiceAccountIn is KubectlAsServiceAccount for a service
// account of another namespace (kube-system's, a GitOps tool's), which it
// creates unless it exists: the account gets the edit role in the test's
// namespace, and kubectl works there with a token of it.
func (f *Framework) KubectlAsServiceAccountIn(t *testing.T, namespace, name string) Kubectl {
	t.Helper()
	ctx := t.Context()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := f.Client.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating service account %s/%s: %v", namespace, name, err)
	}
	f.Grant(t, "edit", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: namespace})
	return f.KubectlWithTokenOf(t, namespace, name)
}

// KubectlWithTokenOf returns kubectl, in the test's namespace, with a token
// of the existing service account namespace/name and only the rights it
// already has (the chart's own, for instance).
func (f *Framework) KubectlWithTokenOf(t *testing.T, namespace, name string) Kubectl {
	t.Helper()
	ctx := t.Context()
	tok, err := f.Client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a token for %s/%s: %v", namespace, name, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: env.cp.Server(), CertificateAuthorityData: env.cp.CAPEM()}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: name}
	cfg.CurrentContext = "local"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatalf("writing kubeconfig for %s/%s: %v", namespace, name, err)
	}
	k := f.Kubectl
	k.Kubeconfig = path
	return k
}

// WriteFile writes content to a file in a temporary directory and returns
// its path, e.g. for an EDITOR script.
func WriteFile(t *testing.T, name, content string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
	return path
}
