package cluster

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/kube"
)

// Cluster is what the live verbs (diff, explain, audit, handover,
// migrate) use of the API server: its dynamic client and REST mapper,
// the structural schemas of its custom resources, and the removal proofs
// of the server.
type Cluster struct {
	dynamic dynamic.Interface
	mapper  meta.RESTMapper
	// schemas are the cluster's structural schemas; nil from New.
	schemas *kube.Schemas
	// prover makes the removal proofs (RemovalSticks); nil from New.
	prover *kube.Cluster
	// labels remembers namespaces' labels (RememberingNamespaceLabels);
	// nil: each call reads them.
	labels *labelMemo
}

// New returns the Cluster of client and mapper, without schemas or
// removal proofs: what tests connect to.
func New(client dynamic.Interface, mapper meta.RESTMapper) *Cluster {
	return &Cluster{dynamic: client, mapper: mapper}
}

// ConnectFunc connects to the cluster that kubectl's connection flags
// (--kubeconfig, --context, --server, …) select.
type ConnectFunc func(flags *genericclioptions.ConfigFlags) (*Cluster, error)

var _ ConnectFunc = Connect

// Connect is the ConnectFunc of the real command: the cluster that flags
// select, with its schemas and the server's removal proofs.
func Connect(flags *genericclioptions.ConfigFlags) (*Cluster, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the API client: %w", err)
	}
	mapper, err := flags.ToRESTMapper()
	if err != nil {
		return nil, fmt.Errorf("creating the REST mapper: %w", err)
	}
	schemas, err := schemasFor(cfg)
	if err != nil {
		return nil, err
	}
	return &Cluster{dynamic: dyn, mapper: mapper, schemas: schemas, prover: kube.NewCluster(dyn, 0)}, nil
}

// Dynamic is the cluster's dynamic client.
func (c *Cluster) Dynamic() dynamic.Interface { return c.dynamic }

// Mapper is the cluster's REST mapper.
func (c *Cluster) Mapper() meta.RESTMapper { return c.mapper }

// ProvesRemovals reports whether RemovalSticks asks the API server (a
// connection made by Connect); a Cluster from New makes no proofs.
func (c *Cluster) ProvesRemovals() bool { return c.prover != nil }

// Resource resolves a kind as kubectl's users write it to a resource (see
// cli.Resource).
func (c *Cluster) Resource(kind string) (schema.GroupVersionResource, bool, error) {
	return cli.Resource(c.mapper, kind)
}

// Get reads one object, KIND/NAME in namespace; kind as kubectl's users
// write it.
func (c *Cluster) Get(ctx context.Context, kind, name, namespace string) (*unstructured.Unstructured, error) {
	gvr, namespaced, err := c.Resource(kind)
	if err != nil {
		return nil, err
	}
	ri := c.dynamic.Resource(gvr)
	var obj *unstructured.Unstructured
	if namespaced {
		obj, err = ri.Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	} else {
		obj, err = ri.Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s/%s: %w", kind, name, err)
	}
	return obj, nil
}

// Patch patches obj, of kind, with patch of type pt, and returns the
// object as the server left it.
func (c *Cluster) Patch(ctx context.Context, kind string, obj *unstructured.Unstructured, pt types.PatchType, patch []byte, opts metav1.PatchOptions) (*unstructured.Unstructured, error) {
	gvr, namespaced, err := c.Resource(kind)
	if err != nil {
		return nil, err
	}
	ri := c.dynamic.Resource(gvr)
	if namespaced {
		return ri.Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), pt, patch, opts)
	}
	return ri.Patch(ctx, obj.GetName(), pt, patch, opts)
}
