package node

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// kubeletConfig is the kubelet's configuration for this machine: cgroupfs
// on cgroup v1 (failCgroupV1: false), no swap check, oomScoreAdj 0 (the
// sandbox lacks CAP_SYS_RESOURCE), Pods' nameserver 127.0.0.1, and the
// API server's client certificate as the only way in.
func kubeletConfig(dir, socket, caFile string, port, healthzPort int) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %[1]s
port: %[2]d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %[3]d
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: %[4]q}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
containerRuntimeEndpoint: unix://%[5]s
podLogsDir: %[6]q
resolvConf: %[7]q
clusterDNS: ["127.0.0.1"]
clusterDomain: cluster.local
staticPodPath: ""
rotateCertificates: false
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {"memory.available": "100Mi", "nodefs.available": "1%%", "imagefs.available": "1%%"}
shutdownGracePeriod: 0s
`, NodeIP, port, healthzPort, caFile, socket, filepath.Join(dir, "pod-logs"), filepath.Join(dir, "resolv.conf"))
}

// proxyConfig is kube-proxy's: iptables, no conntrack sysctls, no
// localhost node ports (which would set route_localnet).
func proxyConfig(kubeconfig string, healthzPort, metricsPort int) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: %q}
hostnameOverride: %s
mode: iptables
clusterCIDR: %s
healthzBindAddress: 127.0.0.1:%d
metricsBindAddress: 127.0.0.1:%d
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false}
`, kubeconfig, Name, PodCIDR, healthzPort, metricsPort)
}

func (n *Node) startScheduler() error {
	kubeconfig, err := n.cp.AddUser("system:kube-scheduler", nil)
	if err != nil {
		return err
	}
	return n.run("kube-scheduler", "--kubeconfig="+kubeconfig, "--authentication-kubeconfig="+kubeconfig,
		"--authorization-kubeconfig="+kubeconfig, "--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=0")
}

func (n *Node) startProxy(ctx context.Context) error {
	kubeconfig, err := n.cp.AddUser("system:kube-proxy", nil)
	if err != nil {
		return err
	}
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	config := filepath.Join(n.dir, "kube-proxy.yaml")
	if err := os.WriteFile(config, []byte(proxyConfig(kubeconfig, ports[0], ports[1])), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", config, err)
	}
	if err := n.run("kube-proxy", "--config="+config); err != nil {
		return err
	}
	p := n.procs[len(n.procs)-1]
	return controlplane.WaitFor(ctx, p, "kube-proxy", func(ctx context.Context) error {
		return get(ctx, "http://127.0.0.1:"+strconv.Itoa(ports[1])+"/metrics")
	})
}

func (n *Node) startKubelet(ctx context.Context) error {
	kubeconfig, err := n.cp.AddUser("system:node:"+Name, []string{"system:nodes"})
	if err != nil {
		return err
	}
	dir := filepath.Join(n.dir, "kubelet")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	caFile := filepath.Join(dir, "ca.crt")
	resolv := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(caFile, n.cp.CAPEM(), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", caFile, err)
	}
	if err := os.WriteFile(resolv, []byte("nameserver 127.0.0.1\n"), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", resolv, err)
	}
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte(kubeletConfig(dir, n.ctrd.socket, caFile, ports[0], ports[1])), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", config, err)
	}
	if err := n.run("kubelet", "--config="+config, "--kubeconfig="+kubeconfig, "--root-dir="+filepath.Join(dir, "root"),
		"--hostname-override="+Name, "--node-ip="+NodeIP.String()); err != nil {
		return err
	}
	n.kubelet = n.procs[len(n.procs)-1]
	return controlplane.WaitFor(ctx, n.kubelet, "the kubelet", func(ctx context.Context) error {
		return get(ctx, "http://127.0.0.1:"+strconv.Itoa(ports[1])+"/healthz")
	})
}

// run starts one of the node's Kubernetes components, logging next to the
// control plane's.
func (n *Node) run(name string, args ...string) error {
	p, err := controlplane.StartProcess(name, filepath.Join(n.binDir, name), n.LogDir(), args)
	if err != nil {
		return err
	}
	n.procs = append(n.procs, p)
	return nil
}

func get(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("creating request for %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("requesting %s: %w", url, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("requesting %s: %s", url, resp.Status)
	}
	return nil
}

// freePorts returns n distinct free TCP ports on loopback.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		defer func() { _ = l.Close() }()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
