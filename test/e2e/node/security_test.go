package node_test

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// What the kernel says of every server container, read from the host's
// /proc: it runs as 65532:65532 with no capabilities, its root filesystem
// is read-only, and only the chart's volumes are writable. A wrong
// securityContext, or a missing writable mount the server needs (it would
// not get Ready), fails here.
func TestServerRunsAsNonRootWithReadOnlyRootAndNoCapabilities(t *testing.T) {
	admin := installed(t)
	ids := admin.Run(t, "get", "pods", "-l", "app.kubernetes.io/name=apply-hygiene", "-o",
		`jsonpath={range .items[*]}{.status.containerStatuses[0].containerID}{"\n"}{end}`).MustSucceed(t).StdoutLines()
	if len(ids) != 2 {
		t.Fatalf("server containers = %q, want 2", ids)
	}
	want := []string{
		"Uid: 65532 65532 65532 65532",
		"Gid: 65532 65532 65532 65532",
		"CapInh: 0000000000000000",
		"CapPrm: 0000000000000000",
		"CapEff: 0000000000000000",
		"CapBnd: 0000000000000000",
		"CapAmb: 0000000000000000",
		"NoNewPrivs: 1",
		"Seccomp: 2",
		"/ ro",
		"/etc/apply-hygiene/config ro",
		"/tls rw",
		"/tmp rw",
		"/var/run/secrets/kubernetes.io/serviceaccount ro",
	}
	for _, id := range ids {
		pid, err := framework.Node(t).ContainerPID(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		got := append(statusLines(t, pid, "Uid", "Gid", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp"), mounts(t, pid)...)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("container %s (-want +got):\n%s", id, diff)
		}
	}
}

// statusLines returns the named fields of /proc/PID/status, whitespace
// collapsed.
func statusLines(t *testing.T, pid int, fields ...string) []string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if ok {
			byName[name] = name + ": " + strings.Join(strings.Fields(value), " ")
		}
	}
	var got []string
	for _, f := range fields {
		got = append(got, byName[f])
	}
	return got
}

// mounts returns the container's mounts other than the kernel's (/proc,
// /dev, /sys and the files the runtime binds, such as /etc/hosts) as
// "path ro|rw", sorted.
func mounts(t *testing.T, pid int) []string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		point, opts := f[4], strings.Split(f[5], ",")[0]
		switch {
		case point == "/proc" || point == "/dev" || point == "/sys",
			strings.HasPrefix(point, "/proc/"), strings.HasPrefix(point, "/dev/"), strings.HasPrefix(point, "/sys/"),
			point == "/etc/hosts" || point == "/etc/hostname" || point == "/etc/resolv.conf" || point == "/dev/termination-log":
			continue
		}
		got = append(got, point+" "+opts)
	}
	sort.Strings(got)
	return got
}
