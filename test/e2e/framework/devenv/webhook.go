package devenv

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// Namespace and Release are where the chart is installed.
const (
	Namespace = "apply-hygiene"
	Release   = "apply-hygiene"
)

// Options configure Start.
type Options struct {
	// RepoRoot is the repository (for the chart and the server's source).
	// Default: controlplane.RepoRoot().
	RepoRoot string
	// BinDir holds helm (and the control plane binaries). Default:
	// controlplane.FindBinDir().
	BinDir string
	// Dir receives the binary, certificates, kubeconfig and log. Default:
	// apply-hygiene in the control plane's directory.
	Dir string
	// Values are extra `helm --set` values, e.g. failurePolicy=Fail. The
	// chart's helm test is off (test.enabled=false) unless they turn it on.
	Values []string
	// Binary, when set, is a prebuilt apply-hygiene server.
	Binary string
	// SelfManagedTLS runs the server with --tls-mode=self-managed: the
	// chart gets no caBundle, the server makes its CA and certificate
	// (for 127.0.0.1), keeps them in the chart's Secret and injects the CA
	// into the webhook configurations.
	SelfManagedTLS bool
	// ServerArgs are extra server flags, e.g. --tls-validity=1m.
	ServerArgs []string
	// Replicas is the number of server processes; more than one run
	// behind a LoadBalancer. 0 means 1.
	Replicas int
	// APIServer, when set, maps the API server's URL to the one the
	// server's kubeconfig uses (a proxy that delays or cuts its calls).
	APIServer func(url string) (string, error)
}

// withDefaults fills the paths that opts leaves empty.
func (opts Options) withDefaults(cp *controlplane.ControlPlane) (Options, error) {
	var err error
	if opts.RepoRoot == "" {
		if opts.RepoRoot, err = controlplane.RepoRoot(); err != nil {
			return opts, err
		}
	}
	if opts.BinDir == "" {
		if opts.BinDir, err = controlplane.FindBinDir(); err != nil {
			return opts, err
		}
	}
	if opts.Dir == "" {
		opts.Dir = filepath.Join(cp.Dir(), "apply-hygiene")
	}
	return opts, nil
}

// TLSSecretName is the chart's self-managed TLS Secret for Release.
const TLSSecretName = Release + "-tls"

// Webhook is the running server: one process, or Options.Replicas
// processes behind a LoadBalancer.
type Webhook struct {
	opts     Options
	kubeEnv  []string
	replicas []*Replica
	lb       *LoadBalancer
	// Port is where the webhook configurations send the API server: the
	// only replica's port, or the LoadBalancer's.
	Port int
	// MetricsURL and LogPath are the first replica's.
	MetricsURL string
	LogPath    string
	// Binary is the server the replicas run: built into Options.Dir, or
	// the prebuilt one.
	Binary string
}

// Replicas returns the server processes.
func (w *Webhook) Replicas() []*Replica { return w.replicas }

// LB returns the load balancer in front of the replicas (nil with one).
func (w *Webhook) LB() *LoadBalancer { return w.lb }

// Start builds the server (unless Options.Binary is set), installs the
// chart in url mode into cp, and starts the server with the chart's
// service account: one process, or Options.Replicas behind a loopback
// LoadBalancer at the chart's webhook.url. It returns once the API server
// calls the webhook.
func Start(ctx context.Context, cp *controlplane.ControlPlane, opts Options) (*Webhook, error) {
	opts, err := opts.withDefaults(cp)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", opts.Dir, err)
	}
	binary, err := build(ctx, opts)
	if err != nil {
		return nil, err
	}
	n := max(opts.Replicas, 1)
	ports, err := freePorts(3*n + 1)
	if err != nil {
		return nil, err
	}
	w := &Webhook{opts: opts, Port: ports[0], Binary: binary, kubeEnv: []string{"KUBECONFIG=" + cp.KubeconfigPath()}}
	if n > 1 {
		w.Port = ports[3*n]
	}
	if err := w.install(ctx, cp); err != nil {
		return nil, err
	}
	common, err := w.commonArgs(ctx, cp)
	if err != nil {
		return nil, err
	}
	for i := range n {
		r, err := w.newReplica(cp, binary, common, ports, i, n)
		if err != nil {
			return nil, err
		}
		w.replicas = append(w.replicas, r)
	}
	w.MetricsURL, w.LogPath = w.replicas[0].MetricsURL, w.replicas[0].LogPath
	if n > 1 {
		if w.lb, err = newLoadBalancer(w.Port, w.replicas); err != nil {
			return nil, err
		}
	}
	if err := w.startAll(ctx, cp); err != nil {
		return nil, errors.Join(err, w.Stop())
	}
	return w, nil
}

// newReplica prepares replica i of n: its ports, log, certificate
// directory and arguments. The first replica keeps the names of a single
// server (apply-hygiene.log, tls/).
func (w *Webhook) newReplica(cp *controlplane.ControlPlane, binary string, common []string, ports []int, i, n int) (*Replica, error) {
	port, metrics, probe := replicaPorts(ports, i)
	suffix := ""
	if i > 0 {
		suffix = "-" + strconv.Itoa(i)
	}
	r := &Replica{Index: i, Port: port, MetricsURL: localURL(metrics, "/metrics"), ReadyURL: localURL(probe, "/readyz"),
		LogPath: filepath.Join(w.opts.Dir, "apply-hygiene"+suffix+".log"), CertDir: filepath.Join(w.opts.Dir, "tls")}
	if w.opts.SelfManagedTLS && n > 1 {
		// Each Pod has its own emptyDir; only the Secret is shared.
		r.CertDir = filepath.Join(w.opts.Dir, "tls"+suffix)
	}
	tlsArgs, err := w.tls(cp, r.CertDir)
	if err != nil {
		return nil, err
	}
	r.args = append([]string{binary}, common...)
	r.args = append(r.args,
		"--port="+strconv.Itoa(port),
		"--cert-dir="+r.CertDir,
		"--metrics-bind-address=127.0.0.1:"+strconv.Itoa(metrics),
		"--health-probe-bind-address=127.0.0.1:"+strconv.Itoa(probe))
	r.args = append(r.args, tlsArgs...)
	r.args = append(r.args, w.opts.ServerArgs...)
	return r, nil
}

// build returns Options.Binary, or controlplane.ProjectBinary: the
// prebuilt server, or ./cmd/apply-hygiene built into opts.Dir.
func build(ctx context.Context, opts Options) (string, error) {
	if opts.Binary != "" {
		return opts.Binary, nil
	}
	return controlplane.ProjectBinary(ctx, "apply-hygiene", opts.Dir)
}

// install runs helm install of the chart in url mode.
func (w *Webhook) install(ctx context.Context, cp *controlplane.ControlPlane) error {
	args := []string{"upgrade", "--install", Release, filepath.Join(w.opts.RepoRoot, "charts", "apply-hygiene"),
		"--namespace", Namespace, "--create-namespace",
		"--set", "webhook.url=https://127.0.0.1:" + strconv.Itoa(w.Port)}
	if !w.opts.SelfManagedTLS {
		args = append(args, "--set", "webhook.caBundle="+base64.StdEncoding.EncodeToString(cp.CAPEM()))
	}
	// Without the helm test's namespace and Deployment, which every audit
	// of the cluster would see; Values "test.enabled=true" installs them.
	args = append(args, "--set", "test.enabled=false")
	for _, v := range w.opts.Values {
		args = append(args, "--set", v)
	}
	return w.helm(ctx, args...)
}

func (w *Webhook) helm(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(w.opts.BinDir, "helm"), args...)
	helmHome := filepath.Join(w.opts.Dir, "helm")
	cmd.Env = append(os.Environ(), w.kubeEnv...)
	cmd.Env = append(cmd.Env, "HELM_CACHE_HOME="+helmHome+"/cache", "HELM_CONFIG_HOME="+helmHome+"/config", "HELM_DATA_HOME="+helmHome+"/data")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, msg)
	}
	return nil
}

// Reconfigure upgrades the release with values (replacing the previous
// extra values) and restarts every replica so it reads the new policy
// configuration.
func (w *Webhook) Reconfigure(ctx context.Context, cp *controlplane.ControlPlane, values ...string) error {
	w.opts.Values = values
	if err := w.install(ctx, cp); err != nil {
		return err
	}
	if err := w.writePolicyConfig(ctx, cp); err != nil {
		return err
	}
	// The chart sets the server's --failure-policy from the same value.
	for _, r := range w.replicas {
		for i, a := range r.args {
			if strings.HasPrefix(a, "--failure-policy=") {
				r.args[i] = "--failure-policy=" + w.failurePolicy()
			}
		}
	}
	return w.Restart(ctx, cp)
}

// Uninstall removes the release, and with it the webhook configurations,
// and the namespace of the probe that Start writes to, and waits until
// that namespace is gone: a cluster as it was before Start, for tests
// that run without the webhook afterwards or start another. Stop the
// server first.
func (w *Webhook) Uninstall(ctx context.Context, cp *controlplane.ControlPlane) error {
	if err := w.helm(ctx, "uninstall", Release, "--namespace", Namespace, "--wait"); err != nil {
		return err
	}
	client, err := adminClient(cp)
	if err != nil {
		return err
	}
	namespaces := client.CoreV1().Namespaces()
	if err := namespaces.Delete(ctx, probeNamespace, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the probe namespace: %w", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := namespaces.Get(ctx, probeNamespace, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the probe namespace to go: %w", err)
	}
	return nil
}

// Stop ends every replica (SIGTERM, then SIGKILL after 10s) and the load
// balancer.
func (w *Webhook) Stop() error {
	var errs []error
	for _, r := range w.replicas {
		if err := r.Terminate(10 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close stops the server and the load balancer for good.
func (w *Webhook) Close() error {
	err := w.Stop()
	if w.lb != nil {
		err = errors.Join(err, w.lb.Close())
	}
	return err
}

// Kill ends every replica with SIGKILL, as a crash would: no graceful
// shutdown, in-flight reviews are cut off.
func (w *Webhook) Kill() error {
	var errs []error
	for _, r := range w.replicas {
		errs = append(errs, r.Kill())
	}
	return errors.Join(errs...)
}

// Restart starts every replica again after Stop or Kill (stopping those
// that run), with the same arguments, and waits until the API server calls
// the webhook.
func (w *Webhook) Restart(ctx context.Context, cp *controlplane.ControlPlane) error {
	if err := w.Stop(); err != nil {
		return err
	}
	return w.startAll(ctx, cp)
}

// startAll starts every replica, waits for their /readyz, then for the
// API server to call the webhook.
func (w *Webhook) startAll(ctx context.Context, cp *controlplane.ControlPlane) error {
	for _, r := range w.replicas {
		if err := r.Start(ctx); err != nil {
			return err
		}
	}
	client, err := adminClient(cp)
	if err != nil {
		return err
	}
	return w.waitCalled(ctx, client)
}

// commonArgs are the flags every replica shares: the policy
// configuration and a kubeconfig with the chart's service account token.
func (w *Webhook) commonArgs(ctx context.Context, cp *controlplane.ControlPlane) ([]string, error) {
	if err := w.writePolicyConfig(ctx, cp); err != nil {
		return nil, err
	}
	kubeconfig, err := w.serviceAccountKubeconfig(ctx, cp)
	if err != nil {
		return nil, err
	}
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--policy-config=" + filepath.Join(w.opts.Dir, "config.yaml"),
		"--namespace=" + Namespace,
		"--failure-policy=" + w.failurePolicy(),
	}, nil
}

// tls returns the server's TLS flags; for file mode it writes a serving
// certificate signed by the control plane's CA (the chart's caBundle).
func (w *Webhook) tls(cp *controlplane.ControlPlane, certDir string) ([]string, error) {
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", certDir, err)
	}
	if w.opts.SelfManagedTLS {
		return []string{"--tls-mode=self-managed", "--tls-secret-name=" + TLSSecretName, "--webhook-config-name=" + Release,
			"--service-name=" + Release, "--tls-extra-hosts=127.0.0.1"}, nil
	}
	certPEM, keyPEM, err := cp.ServingCert()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(certDir, "tls.crt"), certPEM, 0o600); err != nil {
		return nil, fmt.Errorf("writing the serving certificate: %w", err)
	}
	if err := os.WriteFile(filepath.Join(certDir, "tls.key"), keyPEM, 0o600); err != nil {
		return nil, fmt.Errorf("writing the serving key: %w", err)
	}
	return []string{"--tls-mode=file"}, nil
}

func (w *Webhook) failurePolicy() string { return FailurePolicy(w.opts.Values) }

// FailurePolicy is the failurePolicy that the chart values set: the last
// failurePolicy=… (as with `helm --set`), or the chart's default, Ignore.
func FailurePolicy(values []string) string {
	policy := "Ignore"
	for _, v := range values {
		if p, ok := strings.CutPrefix(v, "failurePolicy="); ok {
			policy = p
		}
	}
	return policy
}

// writePolicyConfig copies the chart's policy ConfigMap to a file, as the
// Deployment's volume would.
func (w *Webhook) writePolicyConfig(ctx context.Context, cp *controlplane.ControlPlane) error {
	client, err := adminClient(cp)
	if err != nil {
		return err
	}
	cms, err := client.CoreV1().ConfigMaps(Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + Release})
	if err != nil {
		return fmt.Errorf("listing the chart's ConfigMaps: %w", err)
	}
	for _, cm := range cms.Items {
		if cfg, ok := cm.Data["config.yaml"]; ok {
			return os.WriteFile(filepath.Join(w.opts.Dir, "config.yaml"), []byte(cfg), 0o600)
		}
	}
	return fmt.Errorf("the chart rendered no ConfigMap with config.yaml in %s", Namespace)
}

// serviceAccountKubeconfig writes a kubeconfig with a token of the chart's
// service account.
func (w *Webhook) serviceAccountKubeconfig(ctx context.Context, cp *controlplane.ControlPlane) (string, error) {
	client, err := adminClient(cp)
	if err != nil {
		return "", err
	}
	sas, err := client.CoreV1().ServiceAccounts(Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + Release})
	if err != nil || len(sas.Items) != 1 {
		return "", fmt.Errorf("finding the chart's service account (found %d): %w", len(sas.Items), err)
	}
	name := sas.Items[0].Name
	expiry := int64(24 * 3600)
	tok, err := client.CoreV1().ServiceAccounts(Namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("creating a token for %s/%s: %w", Namespace, name, err)
	}
	cfg := clientcmdapi.NewConfig()
	server := cp.Server()
	if w.opts.APIServer != nil {
		if server, err = w.opts.APIServer(server); err != nil {
			return "", fmt.Errorf("mapping the API server's address for the server: %w", err)
		}
	}
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: cp.CAPEM()}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: name, Namespace: Namespace}
	cfg.CurrentContext = "local"
	path := filepath.Join(w.opts.Dir, "kubeconfig-apply-hygiene")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("writing the server's kubeconfig: %w", err)
	}
	return path, nil
}

func adminClient(cp *controlplane.ControlPlane) (kubernetes.Interface, error) {
	cfg, err := cp.RESTConfig()
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return client, nil
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
