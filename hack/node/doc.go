// Package node runs a real Kubernetes node on this machine beside the
// local control plane (package test/e2e/framework/controlplane), for the tests that run
// apply-hygiene as users run it (test/e2e/node): containerd and runc from
// Debian, a bridge network from the CNI plugins, and kubelet,
// kube-scheduler and kube-proxy built from k8s.io/kubernetes like the
// other components (hack/tools/build.sh node). Images come from tarballs
// (make image) loaded with `ctr images import`, or published with Publish
// to an in-memory registry on loopback that containerd takes for
// docker.io; nothing leaves the machine: every other registry host points
// at 127.0.0.1:1 and Pods' nameserver is 127.0.0.1.
//
// It needs root, cgroups and the Debian packages; Missing names what this
// machine lacks. A node changes the host, so Start records what it will
// touch and Stop puts it back: the kubelet's sysctls, iptables chains, the
// bridge, network namespaces, cgroups, mounts and the directories kubelet
// and containerd make outside the working directory.
//
// Usage (test/e2e/node is the caller):
//
//	n, err := node.Start(ctx, node.Options{Images: []string{"bin/images/pause.tar"}})
//	if err != nil {
//		return fmt.Errorf("starting the node: %w", err)
//	}
//	defer n.Stop()
//	// n.ControlPlane().KubeconfigPath() is an admin kubeconfig.
package node
