// Package controlplane starts and stops a real, local Kubernetes control
// plane for development and end-to-end tests: etcd, kube-apiserver and
// kube-controller-manager, built from their Go modules by hack/tools/build.sh.
//
// The API server serves TLS on loopback with RBAC authorization; an admin
// identity (group system:masters) gets a kubeconfig, and AddUser issues
// client certificates for further identities. Ports are chosen free at
// start, so several control planes can run side by side. Every process runs
// in its own process group and dies with its parent (Pdeathsig); Stop ends
// them all and removes the working directory.
//
// Usage (test/e2e/framework and hack/cluster are the two callers):
//
//	cp, err := controlplane.Start(ctx, controlplane.Options{})
//	if err != nil {
//		return fmt.Errorf("starting the control plane: %w", err)
//	}
//	defer cp.Stop()
//	// cp.KubeconfigPath() is an admin kubeconfig;
//	// cp.AddUser("alice", nil) makes one for another identity.
package controlplane
