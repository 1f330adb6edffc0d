package controlplane

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func (cp *ControlPlane) startEtcd(ctx context.Context, opts Options) (string, error) {
	ports, err := freePorts(2)
	if err != nil {
		return "", err
	}
	clientURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	args := []string{
		"--name=default",
		"--data-dir=" + filepath.Join(cp.dir, "etcd"),
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=default=" + peerURL,
		// A throwaway development store: durability buys nothing here and
		// fsync is the slowest part of every write.
		"--unsafe-no-fsync",
		"--log-level=warn",
	}
	p, err := StartProcess("etcd", filepath.Join(opts.BinDir, "etcd"), filepath.Join(cp.dir, "logs"), args)
	if err != nil {
		return "", err
	}
	cp.procs = append(cp.procs, p)
	return clientURL, WaitFor(ctx, p, "etcd", func(ctx context.Context) error {
		return httpOK(ctx, http.DefaultClient, clientURL+"/health")
	})
}

func (cp *ControlPlane) startAPIServer(ctx context.Context, opts Options, etcdURL string) error {
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	pki := filepath.Join(cp.dir, "pki")
	ips, names := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, []string{"localhost"}
	if opts.NodeIP != nil {
		ips = append(ips, opts.NodeIP, ServiceIP)
		names = append(names, "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local")
	}
	serving, err := cp.ca.issue("kube-apiserver", nil, ips, names)
	if err != nil {
		return err
	}
	certFile, keyFile, err := serving.write(pki, "apiserver")
	if err != nil {
		return err
	}
	caFile := filepath.Join(pki, "ca.crt")
	if err := writeFile(caFile, cp.ca.pem); err != nil {
		return err
	}
	saKey, saPub, err := writeSigningKey(pki)
	if err != nil {
		return err
	}
	auditArgs, err := cp.auditLogArgs()
	if err != nil {
		return err
	}
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[0]),
		"--tls-cert-file=" + certFile,
		"--tls-private-key-file=" + keyFile,
		"--client-ca-file=" + caFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + saPub,
		"--service-account-signing-key-file=" + saKey,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--allow-privileged=true",
		"--cert-dir=" + pki,
		// No nodes run: the kubernetes Service has no real endpoint to
		// publish, and a loopback one only produces reconcile errors.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
	}
	args = append(args, auditArgs...)
	address := "127.0.0.1"
	if opts.NodeIP != nil {
		address = opts.NodeIP.String()
		nodeArgs, err := cp.nodeAPIServerArgs()
		if err != nil {
			return err
		}
		args = override(args, nodeArgs)
	}
	args = override(args, opts.APIServerArgs)
	p, err := StartProcess("kube-apiserver", filepath.Join(opts.BinDir, "kube-apiserver"), filepath.Join(cp.dir, "logs"), args)
	if err != nil {
		return err
	}
	cp.procs = append(cp.procs, p)
	cp.server = "https://" + net.JoinHostPort(address, strconv.Itoa(ports[0]))
	probe, err := cp.AddUser("apply-hygiene-probe", []string{"system:masters"})
	if err != nil {
		return err
	}
	client, err := httpClient(probe)
	if err != nil {
		return err
	}
	return WaitFor(ctx, p, "kube-apiserver", func(ctx context.Context) error {
		return httpOK(ctx, client, cp.server+"/readyz")
	})
}

// nodeAPIServerArgs replace the loopback-only flags for a node (see
// Options.NodeIP).
func (cp *ControlPlane) nodeAPIServerArgs() ([]string, error) {
	client, err := cp.ca.issue("kube-apiserver-kubelet-client", []string{"system:masters"}, nil, nil)
	if err != nil {
		return nil, err
	}
	certFile, keyFile, err := client.write(filepath.Join(cp.dir, "pki"), "kubelet-client")
	if err != nil {
		return nil, err
	}
	return []string{
		"--bind-address=" + cp.nodeIP.String(),
		"--advertise-address=" + cp.nodeIP.String(),
		"--endpoint-reconciler-type=lease",
		"--authorization-mode=Node,RBAC",
		"--enable-aggregator-routing=true",
		"--kubelet-preferred-address-types=InternalIP",
		"--kubelet-client-certificate=" + certFile,
		"--kubelet-client-key=" + keyFile,
	}, nil
}

// override replaces the flags of args that extra sets, and appends the
// rest of extra: list flags such as --authorization-mode append when
// repeated.
func override(args, extra []string) []string {
	set := map[string]bool{}
	for _, a := range extra {
		name, _, _ := strings.Cut(a, "=")
		set[name] = true
	}
	var out []string
	for _, a := range args {
		if name, _, _ := strings.Cut(a, "="); !set[name] {
			out = append(out, a)
		}
	}
	return append(out, extra...)
}

func (cp *ControlPlane) startControllerManager(ctx context.Context, opts Options) error {
	kubeconfig, err := cp.AddUser("system:kube-controller-manager", nil)
	if err != nil {
		return err
	}
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--controllers=" + strings.Join(opts.Controllers, ","),
		"--secure-port=0",
		"--leader-elect=false",
		// The ca.crt of service account token Secrets and the
		// kube-root-ca.crt ConfigMap: Pods verify the API server with it.
		"--root-ca-file=" + filepath.Join(cp.dir, "pki", "ca.crt"),
		"--use-service-account-credentials=true",
		"--concurrent-deployment-syncs=10",
		"--concurrent-statefulset-syncs=10",
	}
	p, err := StartProcess("kube-controller-manager", filepath.Join(opts.BinDir, "kube-controller-manager"), filepath.Join(cp.dir, "logs"), args)
	if err != nil {
		return err
	}
	cp.procs = append(cp.procs, p)
	cfg, err := clientcmd.BuildConfigFromFlags("", cp.kubeconfig)
	if err != nil {
		return fmt.Errorf("loading admin kubeconfig: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	// The service account controller creating "default" proves the
	// controller manager is up and talking to the API server.
	return WaitFor(ctx, p, "kube-controller-manager", func(ctx context.Context) error {
		_, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err
	})
}

// AddUser issues a client certificate for name in groups and writes a
// kubeconfig for it, returning the kubeconfig's path. RBAC decides what the
// user may do; system:masters may do everything.
func (cp *ControlPlane) AddUser(name string, groups []string) (string, error) {
	pair, err := cp.ca.issue(name, groups, nil, nil)
	if err != nil {
		return "", err
	}
	file := strings.NewReplacer(":", "-", "/", "-").Replace(name)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: cp.server, CertificateAuthorityData: cp.ca.pem}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: pair.certPEM, ClientKeyData: pair.keyPEM}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: name, Namespace: "default"}
	cfg.CurrentContext = "local"
	path := filepath.Join(cp.dir, "kubeconfig-"+file)
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return "", fmt.Errorf("encoding kubeconfig for %q: %w", name, err)
	}
	// Written aside and renamed: tests running in parallel may add the
	// same user while a kubectl of another reads its kubeconfig, which
	// must never see half a file (kinds' TestValuesTheServerRespellsAreNoChange
	// read "yaml: line 21: could not find expected ':'").
	tmp, err := os.CreateTemp(cp.dir, "kubeconfig-"+file+".*")
	if err != nil {
		return "", fmt.Errorf("writing kubeconfig for %q: %w", name, err)
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		_ = os.Remove(tmp.Name())
		return "", fmt.Errorf("writing kubeconfig for %q: %w", name, werr)
	}
	return path, nil
}

// RESTConfig returns a client configuration for the admin identity.
func (cp *ControlPlane) RESTConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", cp.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading admin kubeconfig: %w", err)
	}
	return cfg, nil
}

func httpClient(kubeconfig string) (*http.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating HTTP client: %w", err)
	}
	return client, nil
}

func httpOK(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("creating request for %s: %w", url, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("requesting %s: %w", url, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("requesting %s: %s", url, resp.Status)
	}
	return nil
}

// ServingCert issues a TLS serving certificate for loopback (127.0.0.1,
// ::1, localhost) signed by the control plane's CA, for webhooks that the
// API server calls by URL with CAPEM as their caBundle.
func (cp *ControlPlane) ServingCert() (certPEM, keyPEM []byte, err error) {
	return cp.ServingCertValidFor(time.Now().Add(-time.Hour), time.Now().Add(certValidity))
}

// ServingCertValidFor is ServingCert valid from notBefore to notAfter
// only, e.g. one that has expired, for tests of what the API server does
// with it.
func (cp *ControlPlane) ServingCertValidFor(notBefore, notAfter time.Time) (certPEM, keyPEM []byte, err error) {
	pair, err := cp.ca.issueFor("apply-hygiene-webhook", nil, []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, []string{"localhost"}, notBefore, notAfter)
	if err != nil {
		return nil, nil, err
	}
	return pair.certPEM, pair.keyPEM, nil
}
