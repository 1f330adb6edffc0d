// Package cluster_test checks the local control plane commands themselves:
// `cluster up` serves the pinned version, `cluster down` leaves no process
// and no file behind.
package cluster_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// pinnedVersion is the version hack/tools/kube/go.mod pins.
const pinnedVersion = "v1.37.0"

func TestClusterUpServesPinnedVersionAndDownLeavesNothing(t *testing.T) {
	binDir := binDir(t)
	cluster := filepath.Join(t.TempDir(), "cluster")
	run(t, nil, "go", "build", "-o", cluster, "github.com/apply-hygiene/apply-hygiene/hack/cluster")
	stateDir := filepath.Join(t.TempDir(), "state")
	env := []string{"APPLY_HYGIENE_CLUSTER_DIR=" + stateDir, "APPLY_HYGIENE_BIN_DIR=" + binDir}
	t.Cleanup(func() { _ = exec.Command(cluster, "down").Run() })

	up := run(t, env, cluster, "up")
	kubeconfig := filepath.Join(stateDir, "kubeconfig")
	if diff := cmp.Diff("export KUBECONFIG="+kubeconfig+"\n", up); diff != "" {
		t.Fatalf("cluster up output mismatch (-want +got):\n%s", diff)
	}
	kubectl := filepath.Join(binDir, "kubectl")
	kenv := append(slices.Clone(env), "KUBECONFIG="+kubeconfig, "HOME="+t.TempDir())
	version := run(t, kenv, kubectl, "version")
	if !strings.Contains(version, "\nServer Version: "+pinnedVersion+"\n") {
		t.Errorf("kubectl version = %q, want Server Version: %s", version, pinnedVersion)
	}
	if got := run(t, kenv, kubectl, "get", "--raw", "/readyz"); got != "ok" {
		t.Errorf("kubectl get --raw /readyz = %q, want ok", got)
	}
	if again := run(t, env, cluster, "up"); !strings.HasSuffix(again, "export KUBECONFIG="+kubeconfig+"\n") {
		t.Errorf("second cluster up = %q, want the same export line", again)
	}
	if len(processesUsing(t, stateDir)) != 3 {
		t.Errorf("processes using %s = %v, want etcd, kube-apiserver and kube-controller-manager", stateDir, processesUsing(t, stateDir))
	}

	run(t, env, cluster, "down")
	if left := processesUsing(t, stateDir); len(left) > 0 {
		t.Errorf("processes left after cluster down: %v", left)
	}
	if _, err := os.Stat(stateDir); !os.IsNotExist(err) {
		t.Errorf("state directory %s still exists after cluster down (stat: %v)", stateDir, err)
	}
}

func binDir(t *testing.T) string {
	t.Helper()
	return controlplane.RequireTools(t, controlplane.Binaries...)
}

func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// processesUsing lists the command lines of running processes that mention
// dir, which every component of the control plane does in its flags.
func processesUsing(t *testing.T, dir string) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue // the process ended meanwhile
		}
		cmdline := strings.ReplaceAll(string(data), "\x00", " ")
		if strings.Contains(cmdline, dir+"/") && !strings.Contains(cmdline, "cluster run") {
			found = append(found, strings.Fields(cmdline)[0])
		}
	}
	return found
}
