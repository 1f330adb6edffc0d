package node

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// Binaries are the pinned programs a node needs: the control plane's,
// helm, and kubelet, kube-scheduler and kube-proxy (hack/tools/build.sh
// node).
var Binaries = append(append([]string{}, controlplane.Binaries...), "helm", "kubelet", "kube-scheduler", "kube-proxy")

// commands are the Debian programs a node needs (hack/tools/node-packages.sh).
var commands = map[string]string{
	"containerd": "containerd", "ctr": "containerd", "runc": "runc", "iptables": "iptables",
	"ip6tables": "iptables", "ip": "iproute2",
}

// cniPlugins are the containernetworking-plugins the node's network uses.
var cniPlugins = []string{"bridge", "host-local", "loopback"}

// Unsupported says why this machine, or this user, can never run a node
// (not root, no cgroups); empty when it can.
func Unsupported() string {
	if os.Geteuid() != 0 {
		return "a node needs root (kubelet, containerd and the Pods' network); run as root"
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory"); err != nil {
		if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err != nil {
			return "a node needs cgroups: neither /sys/fs/cgroup/memory (v1) nor cgroup v2 is mounted"
		}
	}
	return ""
}

// Missing lists what this machine lacks to run a node that make
// node-tools or the operator can provide, each naming the fix; empty when
// it has everything. Check Unsupported first.
func Missing(binDir string) []string {
	var missing []string
	if tools := controlplane.MissingTools(binDir, Binaries...); len(tools) > 0 {
		missing = append(missing, fmt.Sprintf("%s in %s (make node-tools)", strings.Join(tools, ", "), binDir))
	}
	var packages []string
	for cmd, pkg := range commands {
		if _, err := exec.LookPath(cmd); err != nil {
			packages = append(packages, cmd+" (Debian "+pkg+")")
		}
	}
	for _, p := range cniPlugins {
		if _, err := os.Stat(filepath.Join("/usr/lib/cni", p)); err != nil {
			packages = append(packages, "/usr/lib/cni/"+p+" (Debian containernetworking-plugins)")
		}
	}
	if len(packages) > 0 {
		missing = append(missing, strings.Join(packages, ", ")+": make node-tools installs them")
	}
	prev, alive, err := runningNode()
	switch {
	case err != nil:
		missing = append(missing, err.Error())
	case alive:
		missing = append(missing, fmt.Sprintf("no other node on this machine: pid %d runs one (%s)", prev.PID, stateFile))
	case prev == nil:
		// A node that did not stop is cleaned up by Start; a bridge
		// without one is someone else's.
		if _, err := os.Stat("/sys/class/net/" + bridgeName); err == nil {
			missing = append(missing, "the bridge name "+bridgeName+", which something else uses (ip link delete "+bridgeName+" if it is a leftover)")
		}
	}
	return missing
}

func joinMissing(missing []string) string { return strings.Join(missing, "; ") }
