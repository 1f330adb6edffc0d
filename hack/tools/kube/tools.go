//go:build tools

// Package tools pins the Kubernetes components that the local control plane
// and the e2e tests run: kube-apiserver, kube-controller-manager and kubectl,
// and for the node test (test/e2e/node) kubelet, kube-scheduler and
// kube-proxy, all from k8s.io/kubernetes at the version in go.mod.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
