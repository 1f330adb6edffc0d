package migrate

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
)

// Cluster is what migrate uses of the API server: its dynamic client and
// its REST mapper.
type Cluster struct {
	dynamic dynamic.Interface
	mapper  meta.RESTMapper
}

// NewCluster returns the Cluster of client and mapper.
func NewCluster(client dynamic.Interface, mapper meta.RESTMapper) *Cluster {
	return &Cluster{dynamic: client, mapper: mapper}
}

// ConnectFunc connects to the cluster that kubectl's connection flags
// select.
type ConnectFunc func(flags *genericclioptions.ConfigFlags) (*Cluster, error)

// resource resolves a kind as kubectl's users write it (see cli.Resource).
func (c *Cluster) resource(kind string) (schema.GroupVersionResource, bool, error) {
	return cli.Resource(c.mapper, kind)
}
