package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// Name is the node's name.
const Name = "apply-hygiene-node"

// The node's network: a bridge whose address is the node's InternalIP
// (where the API server listens too) and the gateway of the Pods' subnet.
var (
	// NodeIP is the node's InternalIP, on the bridge.
	NodeIP = net.IPv4(10, 244, 0, 1)
	// PodCIDR is the Pods' subnet.
	PodCIDR = "10.244.0.0/24"
)

// bridgeName is the CNI bridge the node creates and removes.
const bridgeName = "ahcni0"

// Options configure Start.
type Options struct {
	// Dir is the control plane's working directory, with the node's in
	// Dir/node (see controlplane.Options.Dir). Default: a new temporary
	// directory.
	Dir string
	// BinDir holds the control plane's binaries and kubelet,
	// kube-scheduler and kube-proxy. Default: controlplane.FindBinDir().
	BinDir string
	// SandboxImage is containerd's sandbox (pause) image; it must be one
	// of Images. Default: localhost/apply-hygiene/pause:dev (make image).
	SandboxImage string
	// Images are OCI or Docker image tarballs to import before the
	// kubelet starts.
	Images []string
	// StartTimeout bounds the start of the control plane and of the node
	// each. Default: 3 minutes.
	StartTimeout time.Duration
	// Progress, if set, receives one line per start-up step.
	Progress func(msg string)
}

// DefaultSandboxImage is the pause image that make image builds.
const DefaultSandboxImage = "localhost/apply-hygiene/pause:dev"

// Node is a running control plane with one node.
type Node struct {
	cp     *controlplane.ControlPlane
	dir    string
	binDir string
	host   *hostState
	procs  []*controlplane.Process
	// kubelet is also in procs.
	kubelet  *controlplane.Process
	registry *localRegistry
	ctrd     *containerd
}

// Start records the host state, starts the control plane for a node, then
// containerd (importing Images), kube-scheduler, kube-proxy and the
// kubelet, and returns once the node is Ready. On error it stops what it
// started and restores the host.
func Start(ctx context.Context, opts Options) (*Node, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	if why := Unsupported(); why != "" {
		return nil, errors.New(why)
	}
	if missing := Missing(opts.BinDir); len(missing) > 0 {
		return nil, fmt.Errorf("this machine cannot run a node: %s", joinMissing(missing))
	}
	n := &Node{binDir: opts.BinDir}
	if err := n.start(ctx, opts); err != nil {
		return nil, errors.Join(err, n.Stop())
	}
	return n, nil
}

func (o *Options) defaults() error {
	if o.BinDir == "" {
		dir, err := controlplane.FindBinDir()
		if err != nil {
			return err
		}
		o.BinDir = dir
	}
	if o.SandboxImage == "" {
		o.SandboxImage = DefaultSandboxImage
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 3 * time.Minute
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	return nil
}

func (n *Node) start(ctx context.Context, opts Options) error {
	if err := Recover(n.binDir, opts.Progress); err != nil {
		return err
	}
	host, err := recordHost()
	if err != nil {
		return err
	}
	n.host = host
	if err := createBridge(); err != nil {
		return err
	}
	opts.Progress("starting the control plane")
	n.cp, err = controlplane.Start(ctx, controlplane.Options{
		Dir: opts.Dir, BinDir: opts.BinDir, NodeIP: NodeIP, StartTimeout: opts.StartTimeout, Progress: opts.Progress,
	})
	if err != nil {
		return err
	}
	n.dir = filepath.Join(n.cp.Dir(), "node")
	if err := os.MkdirAll(n.dir, 0o700); err != nil {
		return fmt.Errorf("creating the node directory: %w", err)
	}
	n.host.Dir = n.dir
	if err := n.host.save(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	if n.registry, err = startRegistry(); err != nil {
		return err
	}
	opts.Progress("starting containerd")
	if n.ctrd, err = n.startContainerd(ctx, opts.SandboxImage); err != nil {
		return err
	}
	for _, image := range opts.Images {
		opts.Progress("importing " + filepath.Base(image))
		if err := n.ctrd.importImage(ctx, image); err != nil {
			return err
		}
	}
	opts.Progress("starting kube-scheduler and the kubelet")
	if err := n.startScheduler(); err != nil {
		return err
	}
	if err := n.startKubelet(ctx); err != nil {
		return err
	}
	// kube-proxy waits for its Node object, which the kubelet registers.
	opts.Progress("starting kube-proxy")
	if err := n.startProxy(ctx); err != nil {
		return err
	}
	return n.waitReady(ctx)
}

// waitReady waits for the node's Ready condition.
func (n *Node) waitReady(ctx context.Context) error {
	cfg, err := n.cp.RESTConfig()
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	return controlplane.WaitFor(ctx, n.kubelet, "the node to be Ready", func(ctx context.Context) error {
		node, err := client.CoreV1().Nodes().Get(ctx, Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("node %s is not Ready", Name)
	})
}

// Stop stops the node's components, kills the Pods' containers, stops
// containerd and the control plane, and restores the host. It is safe to
// call more than once.
func (n *Node) Stop() error {
	var errs []error
	for i := len(n.procs) - 1; i >= 0; i-- {
		errs = append(errs, n.procs[i].Stop())
	}
	n.procs = nil
	if n.ctrd != nil {
		errs = append(errs, n.ctrd.stop())
		n.ctrd = nil
	}
	if n.registry != nil {
		errs = append(errs, n.registry.close())
		n.registry = nil
	}
	if n.host != nil {
		errs = append(errs, n.host.restore(n.binDir))
		n.host = nil
	}
	if n.cp != nil {
		errs = append(errs, n.cp.Stop())
		n.cp = nil
	}
	return errors.Join(errs...)
}

// ControlPlane is the node's control plane.
func (n *Node) ControlPlane() *controlplane.ControlPlane { return n.cp }

// Dir is the node's working directory (containerd, kubelet, logs of the
// Pods), inside the control plane's.
func (n *Node) Dir() string { return n.dir }

// LogDir holds every component's log.
func (n *Node) LogDir() string { return filepath.Join(n.cp.Dir(), "logs") }
