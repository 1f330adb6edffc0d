package main

import (
	"context"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/handover"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/migrate"
	"github.com/apply-hygiene/apply-hygiene/internal/kube"
)

// cluster is what the live commands use of the API server.
type cluster struct {
	dynamic dynamic.Interface
	mapper  meta.RESTMapper
	// schemas are the cluster's structural schemas; nil in tests.
	schemas *kube.Schemas
	// prover makes the removal proofs (removalSticks); nil in tests.
	prover *kube.Cluster
}

// connectFunc connects to the cluster that kubectl's connection flags
// (--kubeconfig, --context, --server, …) select.
type connectFunc func(flags *genericclioptions.ConfigFlags) (*cluster, error)

// connect is the connectFunc of the real command.
func connect(flags *genericclioptions.ConfigFlags) (*cluster, error) {
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
	schemas, err := schemasFor(flags)
	if err != nil {
		return nil, err
	}
	return &cluster{dynamic: dyn, mapper: mapper, schemas: schemas, prover: kube.NewCluster(dyn, 0)}, nil
}

// verbCluster is cluster as the verb packages use it.
type verbCluster struct{ *cluster }

var _ handover.Cluster = verbCluster{}

// Get reads one object, KIND/NAME in namespace.
func (c verbCluster) Get(ctx context.Context, kind, name, namespace string) (*unstructured.Unstructured, error) {
	return c.get(ctx, kind, name, namespace)
}

// Patch patches obj, of kind, with patch of type pt.
func (c verbCluster) Patch(ctx context.Context, kind string, obj *unstructured.Unstructured, pt types.PatchType, patch []byte, opts metav1.PatchOptions) error {
	gvr, namespaced, err := c.resource(kind)
	if err != nil {
		return err
	}
	ri := c.dynamic.Resource(gvr)
	if namespaced {
		_, err = ri.Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), pt, patch, opts)
	} else {
		_, err = ri.Patch(ctx, obj.GetName(), pt, patch, opts)
	}
	return err
}

// forMigrate is connect as the migrate verb connects.
func forMigrate(connect connectFunc) migrate.ConnectFunc {
	return func(flags *genericclioptions.ConfigFlags) (*migrate.Cluster, error) {
		c, err := connect(flags)
		if err != nil {
			return nil, err
		}
		return migrate.NewCluster(c.dynamic, c.mapper), nil
	}
}

// forHandover is connect as the handover verb connects.
func forHandover(connect connectFunc) handover.ConnectFunc {
	return func(flags *genericclioptions.ConfigFlags) (handover.Cluster, error) {
		c, err := connect(flags)
		if err != nil {
			return nil, err
		}
		return verbCluster{c}, nil
	}
}

// resource resolves a kind as kubectl's users write it to a resource (see
// cli.Resource).
func (c *cluster) resource(kind string) (schema.GroupVersionResource, bool, error) {
	return cli.Resource(c.mapper, kind)
}

// get reads one object, KIND/NAME in namespace.
func (c *cluster) get(ctx context.Context, kind, name, namespace string) (*unstructured.Unstructured, error) {
	gvr, namespaced, err := c.resource(kind)
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

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
