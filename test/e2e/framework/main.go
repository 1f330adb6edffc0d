package framework

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/apply-hygiene/apply-hygiene/hack/node"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// env is the package-wide control plane started by Main.
var env struct {
	stopOnce sync.Once
	cp       *controlplane.ControlPlane
	binDir   string
	home     string
	client   kubernetes.Interface
	webhook  *devenv.Webhook
	// values are the package's chart values (WithWebhook or UseWebhook),
	// which Reconfigure puts back.
	values []string
	// serverBinary is the server built for the first webhook started,
	// which the next UseWebhook runs again.
	serverBinary string
	node         *node.Node
	skipWhy      string
	// skipAlways: the machine can never run what the package needs (a
	// node without root), so it skips even when e2e is required.
	skipAlways bool
	err        error
}

// MainOption configures Main.
type MainOption func(*mainOptions)

type mainOptions struct {
	webhook        bool
	values         []string
	selfManagedTLS bool
	serverArgs     []string
	controllers    []string
	replicas       int
	apiServer      func(url string) (string, error)
	node           bool
	apiServerArgs  []string
}

// WithAPIServerArgs runs kube-apiserver with these extra flags, e.g.
// --tracing-config-file.
func WithAPIServerArgs(args ...string) MainOption {
	return func(o *mainOptions) { o.apiServerArgs = append(o.apiServerArgs, args...) }
}

// WithAPIServerFor makes the server of WithWebhook reach the API server at
// the URL that mapURL returns for the real one, e.g. a proxy of the test
// that delays the server's calls.
func WithAPIServerFor(mapURL func(url string) (string, error)) MainOption {
	return func(o *mainOptions) { o.apiServer = mapURL }
}

// WithReplicas runs the server of WithWebhook as n processes behind a
// loopback load balancer that, like a Service, sends new connections only
// to replicas whose /readyz passes (devenv.LoadBalancer).
func WithReplicas(n int) MainOption {
	return func(o *mainOptions) { o.replicas = n }
}

// WithControllers runs kube-controller-manager with these controllers
// instead of controlplane.DefaultControllers.
func WithControllers(names ...string) MainOption {
	return func(o *mainOptions) { o.controllers = names }
}

// WithWebhook also installs apply-hygiene: the chart in url mode (with the
// extra helm values given) and the server as a local process with the
// chart's service account (see test/e2e/framework/devenv).
func WithWebhook(values ...string) MainOption {
	return func(o *mainOptions) { o.webhook, o.values = true, values }
}

// WithSelfManagedTLS runs the server of WithWebhook with self-managed TLS
// (its own CA, injected into the webhook configurations) and the given
// extra server flags.
func WithSelfManagedTLS(serverArgs ...string) MainOption {
	return func(o *mainOptions) { o.selfManagedTLS, o.serverArgs = true, append(o.serverArgs, serverArgs...) }
}

// WithServerArgs passes extra flags to the server of WithWebhook.
func WithServerArgs(args ...string) MainOption {
	return func(o *mainOptions) { o.serverArgs = append(o.serverArgs, args...) }
}

// Main starts the control plane, runs the package's tests and stops it
// again, also on Ctrl-C.
func Main(m *testing.M, opts ...MainOption) {
	os.Exit(Run(m, opts...))
}

// Run is Main without the exit: it returns the tests' exit code, for a
// TestMain that has its own files to remove afterwards.
func Run(m *testing.M, opts ...MainOption) int {
	var o mainOptions
	for _, opt := range opts {
		opt(&o)
	}
	return run(m, o)
}

func run(m *testing.M, o mainOptions) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(interrupted)
	setUpDone := make(chan struct{})
	go func() {
		if _, ok := <-interrupted; ok {
			cancel()
			// A start-up cut short cleans up after itself; wait for it.
			<-setUpDone
			tearDown()
			os.Exit(130)
		}
	}()
	setUp(ctx, o)
	close(setUpDone)
	defer tearDown()
	code := m.Run()
	if err := checkShadow(ctx, env.webhook); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	return code
}

func setUp(ctx context.Context, o mainOptions) {
	binDir, err := controlplane.FindBinDir()
	if err != nil {
		env.err = err
		return
	}
	env.binDir = binDir
	if missing := controlplane.MissingTools(binDir, controlplane.Binaries...); len(missing) > 0 {
		env.skipWhy = fmt.Sprintf("e2e needs %s in %s: run `make tools` (hack/tools/build.sh)", strings.Join(missing, ", "), binDir)
		return
	}
	home, err := os.MkdirTemp("", "apply-hygiene-e2e-home-")
	if err != nil {
		env.err = fmt.Errorf("creating kubectl home: %w", err)
		return
	}
	env.home = home
	if o.node {
		setUpNode(ctx)
	} else {
		env.cp, env.err = controlplane.Start(ctx, controlplane.Options{BinDir: binDir, Controllers: o.controllers, APIServerArgs: o.apiServerArgs})
	}
	if env.err != nil || env.skipWhy != "" {
		return
	}
	cfg, err := env.cp.RESTConfig()
	if err != nil {
		env.err = err
		return
	}
	if env.client, env.err = kubernetes.NewForConfig(cfg); env.err != nil {
		return
	}
	if o.webhook {
		env.values = o.values
		env.webhook, env.err = startWebhook(ctx, o, filepath.Join(env.cp.Dir(), "apply-hygiene"))
	}
}

// tearDown stops the control plane once, whether the tests ended or the
// run was interrupted.
func tearDown() {
	env.stopOnce.Do(func() {
		if env.webhook != nil {
			if err := env.webhook.Close(); err != nil {
				fmt.Fprintln(os.Stderr, "stopping apply-hygiene:", err)
			}
		}
		if env.node != nil {
			if err := env.node.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "stopping the node:", err)
			}
		} else if env.cp != nil {
			if err := env.cp.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
			}
		}
		if env.home != "" {
			_ = os.RemoveAll(env.home)
		}
	})
}

// requireEnv fails or skips t when the control plane is not available.
func requireEnv(t *testing.T) {
	t.Helper()
	if env.err != nil {
		t.Fatalf("starting the control plane: %v", env.err)
	}
	if env.skipAlways {
		t.Skip(env.skipWhy)
	}
	if env.skipWhy != "" {
		controlplane.Unavailable(t, env.skipWhy)
	}
}

// ControlPlane returns the package's control plane.
func ControlPlane(t *testing.T) *controlplane.ControlPlane {
	t.Helper()
	requireEnv(t)
	return env.cp
}

// KubectlPath is the kubectl built by hack/tools/build.sh.
func KubectlPath() string { return filepath.Join(env.binDir, "kubectl") }
