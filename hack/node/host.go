package node

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// sysctls are the settings the kubelet and kube-proxy may change; restore
// puts back what recordHost read.
var sysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
	"net/ipv4/ip_forward", "net/ipv4/conf/all/route_localnet", "net/bridge/bridge-nf-call-iptables",
}

// hostPaths are the directories a kubelet and containerd may create
// outside their configured ones; restore removes those that were absent.
var hostPaths = []string{
	"/var/lib/kubelet", "/var/log/pods", "/var/log/containers", "/var/lib/containerd", "/run/containerd",
	"/var/lib/cni", "/etc/kubernetes", "/run/netns",
}

// iptablesTables are the tables kube-proxy and the kubelet add chains to.
var iptablesTables = []string{"filter", "nat", "mangle", "raw"}

// hostState is what the node may change on the machine, as found before;
// it is also kept in stateFile while the node runs, so that a node that
// could not stop (its process killed) is cleaned up by the next Start.
type hostState struct {
	// PID is the process that runs the node.
	PID int `json:"pid"`
	// Dir is the node's working directory, whose mounts restore removes.
	Dir     string            `json:"dir"`
	Sysctls map[string]string `json:"sysctls"`
	Absent  []string          `json:"absent"`
	Netns   map[string]bool   `json:"netns"`
	Chains  map[string]bool   `json:"chains"`  // "iptables/nat/KUBE-SERVICES"
	Cgroups map[string]bool   `json:"cgroups"` // /sys/fs/cgroup/*/kubepods that existed
}

func recordHost() (*hostState, error) {
	h := &hostState{PID: os.Getpid(), Sysctls: map[string]string{}, Netns: map[string]bool{}, Chains: map[string]bool{}, Cgroups: map[string]bool{}}
	for _, s := range sysctls {
		if v, err := os.ReadFile(filepath.Join("/proc/sys", s)); err == nil {
			h.Sysctls[s] = strings.TrimSpace(string(v))
		}
	}
	for _, p := range hostPaths {
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			h.Absent = append(h.Absent, p)
		}
	}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		h.Netns[e.Name()] = true
	}
	chains, err := listChains()
	if err != nil {
		return nil, err
	}
	h.Chains = chains
	for _, p := range kubepodsCgroups() {
		h.Cgroups[p] = true
	}
	return h, h.save()
}

// createBridge makes the CNI bridge up front with the node's address, so
// that the API server can listen there before any Pod exists.
func createBridge() error {
	steps := [][]string{
		{"link", "add", bridgeName, "type", "bridge"},
		{"addr", "add", NodeIP.String() + "/24", "dev", bridgeName},
		{"link", "set", bridgeName, "up"},
	}
	for _, args := range steps {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// restore undoes what the node did to the machine, once containerd and
// the kubelet are stopped: it kills what still runs in the Pods' cgroups,
// unmounts, and removes what the node added.
func (h *hostState) restore(binDir string) error {
	var errs []error
	errs = append(errs, h.killPods())
	errs = append(errs, h.unmount(h.Dir))
	errs = append(errs, h.removeNetns())
	errs = append(errs, h.removeChains(binDir))
	errs = append(errs, h.removeCgroups())
	if out, err := exec.Command("ip", "link", "delete", bridgeName).CombinedOutput(); err != nil && !strings.Contains(string(out), "Cannot find device") {
		errs = append(errs, fmt.Errorf("deleting bridge %s: %w: %s", bridgeName, err, out))
	}
	for s, v := range h.Sysctls {
		if err := os.WriteFile(filepath.Join("/proc/sys", s), []byte(v), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restoring sysctl %s: %w", s, err))
		}
	}
	for _, p := range h.Absent {
		errs = append(errs, h.unmount(p))
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", p, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := os.Remove(stateFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", stateFile, err)
	}
	return nil
}

// unmount detaches every mount at or under dir, deepest first.
func (h *hostState) unmount(dir string) error {
	if dir == "" {
		return nil
	}
	// The kernel lists mounts by their real path (.cache may be a link).
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("reading mounts: %w", err)
	}
	defer func() { _ = f.Close() }()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		p := unescapeMount(fields[4])
		if p == dir || strings.HasPrefix(p, dir+"/") {
			points = append(points, p)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(points)))
	var errs []error
	for _, p := range points {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

func unescapeMount(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}

// removeNetns deletes the network namespaces containerd made for Pods
// (their veth ends go with them).
func (h *hostState) removeNetns() error {
	entries, _ := os.ReadDir("/run/netns")
	var errs []error
	for _, e := range entries {
		if h.Netns[e.Name()] || !strings.HasPrefix(e.Name(), "cni-") {
			continue
		}
		p := filepath.Join("/run/netns", e.Name())
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
		}
		if err := os.Remove(p); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// removeCgroups removes the kubepods cgroup trees the kubelet made, leaves
// first; their processes are gone once containerd's tasks are.
func (h *hostState) removeCgroups() error {
	var errs []error
	for _, root := range kubepodsCgroups() {
		if h.Cgroups[root] {
			continue
		}
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := unix.Rmdir(dirs[i]); err != nil && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", dirs[i], err))
			}
		}
	}
	return errors.Join(errs...)
}
