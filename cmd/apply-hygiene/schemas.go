package main

import (
	"fmt"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
)

// newSchemas returns the structural schemas of custom resources, read from
// the API server's OpenAPI v3 documents (merge.WithSchemas); addSchemas
// keeps them current while the manager runs.
func newSchemas(cfg *rest.Config) (*kube.Schemas, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the discovery client: %w", err)
	}
	return kube.NewSchemas(dc.RESTClient(), kube.SchemasOptions{}), nil
}

// addSchemas refreshes schemas in every replica while mgr runs.
func addSchemas(mgr manager.Manager, schemas *kube.Schemas) error {
	if err := mgr.Add(schemas); err != nil {
		return fmt.Errorf("adding the schema refresh: %w", err)
	}
	return nil
}
