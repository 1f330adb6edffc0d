package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// criNamespace is containerd's namespace for the kubelet's containers.
const criNamespace = "k8s.io"

// containerd is the node's container runtime.
type containerd struct {
	proc   *controlplane.Process
	socket string
}

// registries are the hosts whose pulls containerd sends to loopback: to
// the node's local registry for docker.io (Publish), and where nothing
// listens for the others, so that a Pod whose image was not imported
// fails at once instead of reaching the internet. _default covers every
// other host.
var registries = []string{"_default", "docker.io", "registry.k8s.io", "ghcr.io", "gcr.io", "quay.io", "localhost"}

// containerdConfig is containerd's configuration: state under dir, the
// CNI bridge, cgroupfs, and restrict_oom_score_adj because the machine's
// sandbox lacks CAP_SYS_RESOURCE (else every sandbox fails with "can't get
// final child's PID from pipe: EOF").
func containerdConfig(dir, socket, sandboxImage string) string {
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = %[3]q

[plugins."io.containerd.internal.v1.opt"]
  path = %[4]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[5]q
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[6]q
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %[7]q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), socket, filepath.Join(dir, "opt"),
		sandboxImage, filepath.Join(dir, "net.d"), filepath.Join(dir, "certs.d"))
}

// cniConfig is the Pods' network: the bridge, host-local addresses in
// PodCIDR (state under dir), no masquerading (Pods talk only to this
// machine).
func cniConfig(dir string) string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "apply-hygiene",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %q,
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": %q, "gateway": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": %q
      }
    }
  ]
}
`, bridgeName, PodCIDR, NodeIP.String(), filepath.Join(dir, "ipam"))
}

func (n *Node) startContainerd(ctx context.Context, sandboxImage string) (*containerd, error) {
	dir := filepath.Join(n.dir, "containerd")
	socket := filepath.Join(dir, "containerd.sock")
	files := map[string]string{
		filepath.Join(dir, "config.toml"):                        containerdConfig(dir, socket, sandboxImage),
		filepath.Join(dir, "net.d", "10-apply-hygiene.conflist"): cniConfig(dir),
	}
	for _, host := range registries {
		server := "https://127.0.0.1:1"
		if host == "docker.io" {
			server = "http://" + n.registry.addr
		}
		// containerd 1.6 rejects a hosts.toml without a host table
		// ("invalid `host` tree") and then falls back to the real
		// registry: the server is also listed as the only host.
		files[filepath.Join(dir, "certs.d", host, "hosts.toml")] = fmt.Sprintf("server = %[1]q\n\n[host.%[1]q]\n  capabilities = [\"pull\", \"resolve\"]\n", server)
	}
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
	}
	proc, err := controlplane.StartProcess("containerd", "containerd", n.LogDir(), []string{"--config", filepath.Join(dir, "config.toml")})
	if err != nil {
		return nil, err
	}
	c := &containerd{proc: proc, socket: socket}
	err = controlplane.WaitFor(ctx, proc, "containerd", func(ctx context.Context) error {
		_, err := c.ctr(ctx, "version")
		return err
	})
	return c, err
}

// ctr runs containerd's ctr in the kubelet's namespace.
func (c *containerd) ctr(ctx context.Context, args ...string) (string, error) {
	full := append([]string{"--address", c.socket, "--namespace", criNamespace}, args...)
	out, err := exec.CommandContext(ctx, "ctr", full...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// importImage loads an image tarball (OCI layout or docker save).
func (c *containerd) importImage(ctx context.Context, tarball string) error {
	if _, err := os.Stat(tarball); err != nil {
		return fmt.Errorf("importing %s (make image builds it): %w", tarball, err)
	}
	_, err := c.ctr(ctx, "images", "import", tarball)
	return err
}

// stop kills every container the kubelet left, whose processes live on
// under their shims, then stops containerd.
func (c *containerd) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errs []error
	if done, _ := c.proc.Exited(); !done {
		errs = append(errs, c.killTasks(ctx))
	}
	return errors.Join(append(errs, c.proc.Stop())...)
}

func (c *containerd) killTasks(ctx context.Context) error {
	out, err := c.ctr(ctx, "containers", "list", "--quiet")
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range strings.Fields(out) {
		// A container without a task has nothing to kill.
		if _, err := c.ctr(ctx, "tasks", "kill", "--all", "--signal", "SIGKILL", id); err == nil {
			c.waitTaskStopped(ctx, id)
		}
		if _, err := c.ctr(ctx, "tasks", "delete", "--force", id); err != nil && !strings.Contains(err.Error(), "not found") {
			errs = append(errs, err)
		}
		if _, err := c.ctr(ctx, "containers", "delete", id); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c *containerd) waitTaskStopped(ctx context.Context, id string) {
	for range 50 {
		out, err := c.ctr(ctx, "tasks", "list")
		if err != nil {
			return
		}
		running := false
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) >= 3 && f[0] == id && f[2] == "RUNNING" {
				running = true
			}
		}
		if !running {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ContainerPID returns the host PID of a running container, given the
// containerID of a Pod's containerStatuses (containerd://…), so that a
// test can read what the kernel says of it in /proc.
func (n *Node) ContainerPID(ctx context.Context, containerID string) (int, error) {
	id := strings.TrimPrefix(containerID, "containerd://")
	out, err := n.ctrd.ctr(ctx, "tasks", "list")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == id && f[2] == "RUNNING" {
			pid, err := strconv.Atoi(f[1])
			if err != nil {
				return 0, fmt.Errorf("reading the PID of container %s: %w", id, err)
			}
			return pid, nil
		}
	}
	return 0, fmt.Errorf("container %s has no running task", id)
}

// TagImage gives an imported image another name, e.g. the pause image as
// docker.io/library/nginx:1.14.2, so that Pods of manifests written for
// images this machine cannot pull still run (the pause program ignores
// the container's command and arguments).
func (n *Node) TagImage(ctx context.Context, source, target string) error {
	_, err := n.ctrd.ctr(ctx, "images", "tag", "--force", source, target)
	return err
}
