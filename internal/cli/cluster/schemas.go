package cluster

import (
	"context"
	"fmt"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// Schemas is the analyzer's merge.SchemaSource: the structural
// schemas of custom resources in the cluster that the command connected
// to, read from its OpenAPI v3 documents as the server reads them
// (kube.Schemas), so that diff predicts what the webhook says. Before a
// command connects (a --live file, kubectl hygiene test) it has none, and
// custom resources get deduced field sets.
type Schemas struct {
	schemas atomic.Pointer[kube.Schemas]
	started chan *kube.Schemas
}

var _ merge.SchemaSource = (*Schemas)(nil)

// NewSchemas returns the Schemas of no cluster yet: Connecting gives
// them the first cluster connected to, Run reads them.
func NewSchemas() *Schemas {
	return &Schemas{started: make(chan *kube.Schemas, 1)}
}

// TypeConverter returns the schema of gvk in the connected cluster.
func (c *Schemas) TypeConverter(gvk schema.GroupVersionKind) (managedfields.TypeConverter, bool) {
	s := c.schemas.Load()
	if s == nil {
		return nil, false
	}
	return s.TypeConverter(gvk)
}

// Run refreshes the schemas of the first cluster that the command
// connects to until ctx ends.
func (c *Schemas) Run(ctx context.Context) {
	select {
	case s := <-c.started:
		_ = s.Start(ctx) // Start logs its errors and returns none
	case <-ctx.Done():
	}
}

// Connecting returns connect that also reads the schemas of the cluster it
// connects to (the first one).
func (c *Schemas) Connecting(connect ConnectFunc) ConnectFunc {
	return func(flags *genericclioptions.ConfigFlags) (*Cluster, error) {
		cl, err := connect(flags)
		if err != nil || cl.schemas == nil {
			return cl, err
		}
		if c.schemas.CompareAndSwap(nil, cl.schemas) {
			c.started <- cl.schemas
		}
		return cl, nil
	}
}

// schemasFor returns the schemas of the cluster that cfg reaches.
func schemasFor(cfg *rest.Config) (*kube.Schemas, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the discovery client: %w", err)
	}
	return kube.NewSchemas(dc.RESTClient(), kube.SchemasOptions{}), nil
}
