package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Options configure Start.
type Options struct {
	// BinDir holds the etcd, kube-apiserver and kube-controller-manager
	// binaries. Default: FindBinDir().
	BinDir string
	// Dir is the working directory for certificates, etcd data, logs and
	// kubeconfigs. It is created if missing and removed by Stop.
	// Default: a new temporary directory.
	Dir string
	// Controllers is the kube-controller-manager --controllers list.
	// Default: DefaultControllers.
	Controllers []string
	// StartTimeout bounds the wait for every component to be ready.
	// Default: 2 minutes.
	StartTimeout time.Duration
	// Progress, if set, receives one line per start-up step.
	Progress func(msg string)
	// NodeIP, when set, readies the control plane for a node (package
	// hack/node): the API server listens and advertises there (the
	// kubernetes Service's endpoint, which Pods reach through kube-proxy
	// at ServiceIP), its certificate also names ServiceIP and the
	// kubernetes.default.svc names, it authorizes kubelets (Node,RBAC),
	// calls webhooks at their Service's endpoints
	// (--enable-aggregator-routing) and kubelets at their InternalIP, and
	// kube-controller-manager also runs NodeControllers. Default: unset,
	// loopback only and no endpoint for the kubernetes Service.
	NodeIP net.IP
	// APIServerArgs are extra kube-apiserver flags; one the control plane
	// sets is replaced. Default: none.
	APIServerArgs []string
}

// ServiceIP is the kubernetes Service's cluster IP, the first of the
// service range --service-cluster-ip-range=10.96.0.0/16.
var ServiceIP = net.IPv4(10, 96, 0, 1)

// NodeControllers are the controllers a node adds to DefaultControllers:
// EndpointSlices for kube-proxy and the API server's webhook calls,
// kube-root-ca.crt for every Pod's service account volume, the
// PodDisruptionBudget status that kubectl drain reads, and the node
// lifecycle, which lifts the not-ready taint a kubelet registers with.
var NodeControllers = []string{
	"endpoints-controller",
	"endpointslice-controller",
	"endpointslice-mirroring-controller",
	"root-ca-certificate-publisher-controller",
	"disruption-controller",
	"node-lifecycle-controller",
}

// DefaultControllers are the controllers apply-hygiene's scenarios need:
// rollouts create ReplicaSets and ControllerRevisions for real, deleted
// owners are garbage-collected, namespaces get their default service
// account and can be deleted, and the aggregated roles (admin, edit, view)
// get their rules.
var DefaultControllers = []string{
	"clusterrole-aggregation-controller",
	"deployment-controller",
	"replicaset-controller",
	"statefulset-controller",
	"daemonset-controller",
	"garbage-collector-controller",
	"serviceaccount-controller",
	"namespace-controller",
}

// AdminUser is the identity of the admin kubeconfig.
const AdminUser = "apply-hygiene-admin"

// ControlPlane is a running etcd, kube-apiserver and kube-controller-manager.
type ControlPlane struct {
	dir        string
	nodeIP     net.IP
	ca         *authority
	server     string
	kubeconfig string
	procs      []*Process
}

// Start runs etcd, then kube-apiserver, then kube-controller-manager, and
// returns once the API server is ready and the controllers run. On error
// everything already started is stopped again.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	cp := &ControlPlane{dir: opts.Dir, nodeIP: opts.NodeIP}
	if err := cp.start(ctx, opts); err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	return cp, nil
}

func (o Options) withDefaults() (Options, error) {
	if o.BinDir == "" {
		dir, err := FindBinDir()
		if err != nil {
			return o, err
		}
		o.BinDir = dir
	}
	if o.Dir == "" {
		dir, err := os.MkdirTemp("", "apply-hygiene-cp-")
		if err != nil {
			return o, fmt.Errorf("creating working directory: %w", err)
		}
		o.Dir = dir
	}
	if len(o.Controllers) == 0 {
		o.Controllers = DefaultControllers
	}
	if o.NodeIP != nil {
		o.Controllers = append(append([]string{}, o.Controllers...), NodeControllers...)
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 2 * time.Minute
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	return o, nil
}

func (cp *ControlPlane) start(ctx context.Context, opts Options) error {
	for _, sub := range []string{"pki", "logs", "etcd"} {
		if err := os.MkdirAll(filepath.Join(cp.dir, sub), 0o700); err != nil {
			return fmt.Errorf("creating %s directory: %w", sub, err)
		}
	}
	ca, err := newAuthority()
	if err != nil {
		return err
	}
	cp.ca = ca
	opts.Progress("starting etcd")
	etcdURL, err := cp.startEtcd(ctx, opts)
	if err != nil {
		return err
	}
	opts.Progress("starting kube-apiserver")
	if err := cp.startAPIServer(ctx, opts, etcdURL); err != nil {
		return err
	}
	admin, err := cp.AddUser(AdminUser, []string{"system:masters"})
	if err != nil {
		return err
	}
	cp.kubeconfig = admin
	opts.Progress("starting kube-controller-manager")
	return cp.startControllerManager(ctx, opts)
}

// Stop ends every component, newest first, and removes the working
// directory. It is safe to call more than once.
func (cp *ControlPlane) Stop() error {
	var errs []error
	for i := len(cp.procs) - 1; i >= 0; i-- {
		errs = append(errs, cp.procs[i].Stop())
	}
	cp.procs = nil
	if cp.dir != "" {
		errs = append(errs, os.RemoveAll(cp.dir))
	}
	return errors.Join(errs...)
}

// Server is the API server's URL.
func (cp *ControlPlane) Server() string { return cp.server }

// Dir is the working directory.
func (cp *ControlPlane) Dir() string { return cp.dir }

// KubeconfigPath is the admin kubeconfig.
func (cp *ControlPlane) KubeconfigPath() string { return cp.kubeconfig }

// CAPEM is the PEM bundle of the CA that signed the API server's serving
// certificate and every client certificate.
func (cp *ControlPlane) CAPEM() []byte { return cp.ca.pem }

// WaitFor polls check until it succeeds, the process exits or ctx ends.
func WaitFor(ctx context.Context, p *Process, what string, check func(context.Context) error) error {
	var last error
	for {
		if done, err := p.Exited(); done {
			return fmt.Errorf("waiting for %s: %w\n%s", what, err, p.LogTail(20))
		}
		if last = check(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last error: %w)\n%s", what, ctx.Err(), last, p.LogTail(20))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// freePorts returns n distinct free TCP ports on loopback. The ports are
// released before use, which is racy only against other processes that also
// bind port 0 in the same instant.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// FindBinDir locates the control plane binaries: $APPLY_HYGIENE_BIN_DIR, or
// .cache/bin in the repository that contains the working directory (where
// hack/tools/build.sh links them).
func FindBinDir() (string, error) {
	if dir := os.Getenv("APPLY_HYGIENE_BIN_DIR"); dir != "" {
		return dir, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, ".cache", "bin"), nil
}

// ProjectBinaryEnv names the directory of the project's own binaries when
// they are built once for a whole run (make test-e2e sets it to bin/, which
// make build fills): tests then run those instead of linking each package's
// copy, about ten seconds of a core per binary and package.
const ProjectBinaryEnv = "APPLY_HYGIENE_PROJECT_BIN"

// ProjectBinary returns the project's binary name (apply-hygiene,
// kubectl-hygiene): the prebuilt one in $APPLY_HYGIENE_PROJECT_BIN when
// it is set (an error when the binary is not there, so that a run never
// falls back to a build it was told not to make), else ./cmd/<name>
// built into dir.
func ProjectBinary(ctx context.Context, name, dir string) (string, error) {
	if prebuilt := os.Getenv(ProjectBinaryEnv); prebuilt != "" {
		path, err := filepath.Abs(filepath.Join(prebuilt, name))
		if err != nil {
			return "", fmt.Errorf("finding the prebuilt %s: %w", name, err)
		}
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("%s=%s has no %s (run make build): %w", ProjectBinaryEnv, prebuilt, name, err)
		}
		return path, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/"+name)
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w\n%s", name, err, msg)
	}
	return out, nil
}

// RepoRoot walks up from the working directory to the directory whose go.mod
// declares the apply-hygiene module.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository root: %w", err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module github.com/apply-hygiene/apply-hygiene\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding the repository root: no go.mod of github.com/apply-hygiene/apply-hygiene above the working directory")
		}
		dir = parent
	}
}

// MissingTools lists the named tools not found in dir.
func MissingTools(dir string, names ...string) []string {
	var missing []string
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			missing = append(missing, name)
		}
	}
	return missing
}
