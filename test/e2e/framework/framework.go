package framework

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// Framework is one test's view of the control plane: its own namespace, a
// client and kubectl as the admin.
type Framework struct {
	// Namespace is created for the test and deleted when it ends.
	Namespace string
	// Client is a typed client with admin rights.
	Client kubernetes.Interface
	// Kubectl is the built kubectl as the admin, in Namespace.
	Kubectl Kubectl
}

// New creates a namespace for t and returns the framework for it.
func New(t *testing.T) *Framework {
	t.Helper()
	requireEnv(t)
	ns := namespaceFor(t)
	_, err := env.client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", ns, err)
	}
	t.Cleanup(func() {
		// Namespace deletion finishes in the background; the test does
		// not wait for the namespace controller.
		err := env.client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		if err != nil {
			t.Errorf("deleting namespace %s: %v", ns, err)
		}
	})
	return &Framework{
		Namespace: ns,
		Client:    env.client,
		Kubectl:   Kubectl{Path: KubectlPath(), Kubeconfig: env.cp.KubeconfigPath(), Namespace: ns},
	}
}

// KubectlAs returns kubectl with a client certificate for user in groups,
// in the test's namespace. RBAC for the user is the test's business.
func (f *Framework) KubectlAs(t *testing.T, user string, groups ...string) Kubectl {
	t.Helper()
	kubeconfig, err := env.cp.AddUser(user, groups)
	if err != nil {
		t.Fatalf("adding user %s: %v", user, err)
	}
	k := f.Kubectl
	k.Kubeconfig = kubeconfig
	return k
}

// Eventually polls cond every 200ms until it returns true, an error, or
// timeout passes; it fails t with what describes the awaited state.
func Eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, timeout, true, cond)
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

var invalidName = regexp.MustCompile(`[^a-z0-9-]+`)

// namespaceFor derives a unique, readable namespace name from the test name.
func namespaceFor(t *testing.T) string {
	name := invalidName.ReplaceAllString(strings.ToLower(t.Name()), "-")
	suffix := fmt.Sprintf("-%d", time.Now().UnixNano()%100000)
	if max := 63 - len(suffix); len(name) > max {
		name = name[:max]
	}
	return strings.Trim(name, "-") + suffix
}
