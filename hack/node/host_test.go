package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The kernel lists a mount by its real path; a node directory reached
// through a symlink (the repository's .cache is one in worktrees) must
// still have its mounts removed, or removing the directory fails with
// "device or resource busy".
func TestUnmountFindsMountsThroughASymlink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "cache")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	point := filepath.Join(real, "node", "kubelet", "root")
	if err := os.MkdirAll(point, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", point, "tmpfs", 0, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(point, unix.MNT_DETACH) })

	if err := (&hostState{}).unmount(filepath.Join(link, "node")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), " "+point+" ") {
		t.Errorf("%s is still mounted", point)
	}
}
