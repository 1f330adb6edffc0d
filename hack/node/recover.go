package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stateFile holds the hostState of the running node.
const stateFile = "/run/apply-hygiene-node.json"

func (h *hostState) save() error {
	data, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("encoding the host state: %w", err)
	}
	if err := os.WriteFile(stateFile, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", stateFile, err)
	}
	return nil
}

// runningNode returns the stateFile of a node, and whether its process
// still runs; nil when there is none.
func runningNode() (*hostState, bool, error) {
	data, err := os.ReadFile(stateFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", stateFile, err)
	}
	var h hostState
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", stateFile, err)
	}
	return &h, h.PID > 0 && syscall.Kill(h.PID, 0) == nil, nil
}

// Recover restores the host after a node whose process died without
// stopping it (a test binary killed at its timeout): its Pods still run
// under their shims, and its bridge, chains, sysctls and mounts are still
// there. It does nothing when no node ran, and fails when one still runs.
// Start calls it; so does hack/cluster before it clears its directory.
func Recover(binDir string, progress func(string)) error {
	prev, alive, err := runningNode()
	if err != nil || prev == nil {
		return err
	}
	if alive {
		return fmt.Errorf("another node runs on this machine (pid %d, %s)", prev.PID, stateFile)
	}
	progress(fmt.Sprintf("cleaning up after the node of pid %d, which did not stop", prev.PID))
	var errs []error
	if prev.Dir != "" {
		errs = append(errs, killProcessesUsing(prev.Dir))
	}
	errs = append(errs, prev.restore(binDir))
	// The control plane's directory, of which the node's is "node".
	if prev.Dir != "" && filepath.Base(prev.Dir) == "node" {
		errs = append(errs, os.RemoveAll(filepath.Dir(prev.Dir)))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cleaning up after the node of pid %d: %w", prev.PID, err)
	}
	return nil
}

// kubepodsCgroups are the kubelet's cgroup roots (cgroupfs driver) on
// this machine, whether or not they exist.
func kubepodsCgroups() []string {
	roots, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods")
	if st, err := os.Stat("/sys/fs/cgroup/kubepods"); err == nil && st.IsDir() {
		roots = append(roots, "/sys/fs/cgroup/kubepods")
	}
	return roots
}

// killPods kills every process left in the kubepods cgroups the node made
// (containers whose shim or runtime died first) and waits for them to go.
func (h *hostState) killPods() error {
	var pids []int
	for _, root := range kubepodsCgroups() {
		if h.Cgroups[root] {
			continue
		}
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
				return nil
			}
			data, _ := os.ReadFile(p)
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil {
					pids = append(pids, pid)
				}
			}
			return nil
		})
	}
	return killAndWait(pids)
}

// killProcessesUsing kills the processes whose command line names dir:
// the containerd shims of a node whose containerd died.
func killProcessesUsing(dir string) error {
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		if err := killProcessesUsing(real); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return fmt.Errorf("listing processes: %w", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.Contains(string(cmdline), dir+"/") {
			pids = append(pids, pid)
		}
	}
	return killAndWait(pids)
}

func killAndWait(pids []int) error {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for syscall.Kill(pid, 0) == nil {
			if time.Now().After(deadline) {
				return fmt.Errorf("process %d still runs 10s after SIGKILL", pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}
