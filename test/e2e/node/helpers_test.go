package node_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// The release as docs/install.md installs it.
const (
	release   = "apply-hygiene"
	namespace = "apply-hygiene"
	// testImage is make image's helm test image; docs/install.md passes
	// it as test.image on a machine without a registry.
	testImage = "localhost/apply-hygiene/helm-test:dev"
)

// helm runs the pinned helm as the admin and returns its combined output
// and exit code.
func helm(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, code, err := runHelm(context.Background(), framework.ControlPlane(t).KubeconfigPath(), args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("$ helm %s\n%s(exit %d)", strings.Join(args, " "), out, code)
	return out, code
}

// runHelm is helm with kubeconfig, for a goroutine other than the test's:
// it returns the error of a helm that could not run instead of failing a
// test.
func runHelm(ctx context.Context, kubeconfig string, args ...string) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	home, err := os.MkdirTemp("", "apply-hygiene-helm-")
	if err != nil {
		return "", 0, fmt.Errorf("creating helm's home: %w", err)
	}
	defer func() { _ = os.RemoveAll(home) }()
	cmd := exec.CommandContext(ctx, filepath.Join(filepath.Dir(framework.KubectlPath()), "helm"), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig,
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return out.String(), exitErr.ExitCode(), nil
	} else if err != nil {
		return "", 0, fmt.Errorf("running helm %s: %w", strings.Join(args, " "), err)
	}
	return out.String(), 0, nil
}

var install struct {
	once sync.Once
	ok   bool
}

// installed installs the chart once for the package, exactly as
// docs/install.md says, and waits for the rollout; it fails t when that
// failed, also for the tests after the first.
func installed(t *testing.T) framework.Kubectl {
	t.Helper()
	admin := framework.Kubectl{Path: framework.KubectlPath(), Kubeconfig: framework.ControlPlane(t).KubeconfigPath(), Namespace: namespace}
	install.once.Do(func() {
		chart, err := chartDir()
		if err != nil {
			t.Fatal(err)
		}
		if _, code := helm(t, "install", release, chart, "--namespace", namespace, "--create-namespace",
			"--set", "test.image="+testImage); code != 0 {
			return
		}
		if admin.Run(t, "rollout", "status", "deployment/"+release, "--timeout=100s").ExitCode != 0 {
			dumpNode(t, admin)
			return
		}
		install.ok = true
	})
	if !install.ok {
		t.Fatal("helm install as docs/install.md says failed (see the first test's log)")
	}
	return admin
}

// imageTarball is one of make image's tarballs.
func imageTarball(name string) (string, error) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin", "images", name), nil
}

func chartDir() (string, error) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "charts", "apply-hygiene"), nil
}

// dumpNode logs what a user would look at when Pods do not come up: the
// Pods, their description, the events and the kubelet's last lines.
func dumpNode(t *testing.T, admin framework.Kubectl) {
	t.Helper()
	admin.Run(t, "get", "pods", "-A", "-o", "wide")
	admin.Run(t, "describe", "pods")
	admin.Run(t, "get", "events")
	admin.Run(t, "logs", "-l", "app.kubernetes.io/name=apply-hygiene", "--tail=30", "--all-containers")
	for _, name := range []string{"kubelet", "containerd"} {
		data, err := os.ReadFile(filepath.Join(framework.Node(t).LogDir(), name+".log"))
		if err != nil {
			t.Logf("reading the %s log: %v", name, err)
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		t.Logf("last lines of the %s log:\n%s", name, strings.Join(lines[max(0, len(lines)-40):], "\n"))
	}
}
