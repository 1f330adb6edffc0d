package cluster

import "k8s.io/cli-runtime/pkg/genericclioptions"

// Flags are the connection of a verb that reads a live cluster (diff,
// explain, audit): kubectl's connection flags (--kubeconfig, --context,
// --namespace, …), registered with AddFlags, and the ConnectFunc that
// connects with them.
type Flags struct {
	*genericclioptions.ConfigFlags
	connect ConnectFunc
}

// NewFlags returns kubectl's connection flags, with their defaults,
// connecting with connect: Connect for the real command, a fake for
// tests.
func NewFlags(connect ConnectFunc) Flags {
	return Flags{ConfigFlags: genericclioptions.NewConfigFlags(true), connect: connect}
}

// Connect connects to the cluster the flags select.
func (f *Flags) Connect() (*Cluster, error) {
	return f.connect(f.ConfigFlags)
}
