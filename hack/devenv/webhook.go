package devenv

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/apply-hygiene/apply-hygiene/hack/controlplane"
)

// Namespace and Release are where the chart is installed.
const (
	Namespace = "apply-hygiene"
	Release   = "apply-hygiene"
)

// Options configure Start.
type Options struct {
	// RepoRoot is the repository (for the chart and the server's source).
	RepoRoot string
	// BinDir holds helm (and the control plane binaries).
	BinDir string
	// Dir receives the binary, certificates, kubeconfig and log.
	Dir string
	// Values are extra `helm --set` values, e.g. failurePolicy=Fail.
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
}

// TLSSecretName is the chart's self-managed TLS Secret for Release.
const TLSSecretName = Release + "-tls"

// Webhook is the running server.
type Webhook struct {
	cmd        *exec.Cmd
	done       chan struct{}
	opts       Options
	args       []string
	kubeEnv    []string
	MetricsURL string
	LogPath    string
	Port       int
}

// Start builds the server (unless Options.Binary is set), installs the
// chart in url mode into cp, and starts the server with the chart's
// service account. It returns once the API server calls the webhook.
func Start(ctx context.Context, cp *controlplane.ControlPlane, opts Options) (*Webhook, error) {
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", opts.Dir, err)
	}
	binary, err := build(ctx, opts)
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	w := &Webhook{opts: opts, Port: ports[0], LogPath: filepath.Join(opts.Dir, "apply-hygiene.log"),
		MetricsURL: "http://127.0.0.1:" + strconv.Itoa(ports[1]) + "/metrics",
		kubeEnv:    []string{"KUBECONFIG=" + cp.KubeconfigPath()}}
	if err := w.install(ctx, cp); err != nil {
		return nil, err
	}
	args, err := w.serverArgs(ctx, cp, ports)
	if err != nil {
		return nil, err
	}
	w.args = append([]string{binary}, args...)
	if err := w.start(); err != nil {
		return nil, err
	}
	if err := w.waitReady(ctx, cp, ports[2]); err != nil {
		return nil, errors.Join(err, w.Stop())
	}
	return w, nil
}

// build compiles ./cmd/apply-hygiene into opts.Dir.
func build(ctx context.Context, opts Options) (string, error) {
	if opts.Binary != "" {
		return opts.Binary, nil
	}
	out := filepath.Join(opts.Dir, "apply-hygiene")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/apply-hygiene")
	cmd.Dir = opts.RepoRoot
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building apply-hygiene: %w\n%s", err, msg)
	}
	return out, nil
}

// install runs helm install of the chart in url mode.
func (w *Webhook) install(ctx context.Context, cp *controlplane.ControlPlane) error {
	args := []string{"upgrade", "--install", Release, filepath.Join(w.opts.RepoRoot, "charts", "apply-hygiene"),
		"--namespace", Namespace, "--create-namespace",
		"--set", "webhook.url=https://127.0.0.1:" + strconv.Itoa(w.Port)}
	if !w.opts.SelfManagedTLS {
		args = append(args, "--set", "webhook.caBundle="+base64.StdEncoding.EncodeToString(cp.CAPEM()))
	}
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
// extra values) and restarts the server so it reads the new policy
// configuration.
func (w *Webhook) Reconfigure(ctx context.Context, cp *controlplane.ControlPlane, values ...string) error {
	w.opts.Values = values
	if err := w.install(ctx, cp); err != nil {
		return err
	}
	if err := w.writePolicyConfig(ctx, cp); err != nil {
		return err
	}
	if err := w.Stop(); err != nil {
		return err
	}
	if err := w.start(); err != nil {
		return err
	}
	return w.waitReady(ctx, cp, 0)
}

// Stop ends the server (SIGTERM, then SIGKILL after 10s).
func (w *Webhook) Stop() error {
	if w.cmd == nil {
		return nil
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.done
	}
	w.cmd = nil
	return nil
}

// Kill ends the server with SIGKILL, as a crash would: no graceful
// shutdown, in-flight reviews are cut off.
func (w *Webhook) Kill() error {
	if w.cmd == nil {
		return nil
	}
	if err := w.cmd.Process.Kill(); err != nil {
		return fmt.Errorf("killing apply-hygiene: %w", err)
	}
	<-w.done
	w.cmd = nil
	return nil
}

// Restart starts the server again after Stop or Kill, with the same
// arguments, and waits until the API server calls it.
func (w *Webhook) Restart(ctx context.Context, cp *controlplane.ControlPlane) error {
	if err := w.Stop(); err != nil {
		return err
	}
	if err := w.start(); err != nil {
		return err
	}
	return w.waitReady(ctx, cp, 0)
}

func (w *Webhook) start() error {
	log, err := os.OpenFile(w.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening the server log: %w", err)
	}
	cmd := exec.Command(w.args[0], w.args[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return fmt.Errorf("starting apply-hygiene: %w", err)
	}
	w.cmd, w.done = cmd, make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = log.Close()
		close(w.done)
	}()
	return nil
}

// serverArgs prepares certificates, the policy configuration and a
// kubeconfig with the chart's service account token.
func (w *Webhook) serverArgs(ctx context.Context, cp *controlplane.ControlPlane, ports []int) ([]string, error) {
	certDir := filepath.Join(w.opts.Dir, "tls")
	tlsArgs, err := w.tls(cp, certDir)
	if err != nil {
		return nil, err
	}
	if err := w.writePolicyConfig(ctx, cp); err != nil {
		return nil, err
	}
	kubeconfig, err := w.serviceAccountKubeconfig(ctx, cp)
	if err != nil {
		return nil, err
	}
	return append([]string{
		"--kubeconfig=" + kubeconfig,
		"--port=" + strconv.Itoa(ports[0]),
		"--cert-dir=" + certDir,
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(ports[1]),
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(ports[2]),
		"--policy-config=" + filepath.Join(w.opts.Dir, "config.yaml"),
		"--namespace=" + Namespace,
		"--failure-policy=" + w.failurePolicy(),
	}, append(tlsArgs, w.opts.ServerArgs...)...), nil
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

func (w *Webhook) failurePolicy() string {
	for _, v := range w.opts.Values {
		if p, ok := strings.CutPrefix(v, "failurePolicy="); ok {
			return p
		}
	}
	return "Ignore"
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
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: cp.Server(), CertificateAuthorityData: cp.CAPEM()}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: name, Namespace: Namespace}
	cfg.CurrentContext = "local"
	path := filepath.Join(w.opts.Dir, "kubeconfig-apply-hygiene")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("writing the server's kubeconfig: %w", err)
	}
	return path, nil
}

// waitReady waits for /readyz and for the API server to call the webhook:
// webhook configurations take effect asynchronously. probePort 0 means the
// one in the server's arguments.
func (w *Webhook) waitReady(ctx context.Context, cp *controlplane.ControlPlane, probePort int) error {
	if probePort == 0 {
		for _, a := range w.args {
			if p, ok := strings.CutPrefix(a, "--health-probe-bind-address=127.0.0.1:"); ok {
				probePort, _ = strconv.Atoi(p)
			}
		}
	}
	ready := "http://127.0.0.1:" + strconv.Itoa(probePort) + "/readyz"
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-w.done:
			data, _ := os.ReadFile(w.LogPath)
			return fmt.Errorf("apply-hygiene exited during start-up:\n%s", data)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if resp, err := http.Get(ready); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				client, err := adminClient(cp)
				if err != nil {
					return err
				}
				return w.waitCalled(ctx, client)
			}
		}
	}
	data, _ := os.ReadFile(w.LogPath)
	return fmt.Errorf("apply-hygiene not ready after 60s:\n%s", data)
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
