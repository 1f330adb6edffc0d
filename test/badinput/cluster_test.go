package badinput_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/webhook"
)

// cluster is a fake webhook.Cluster: the stored objects by resource and
// name, no revisions, and every namespace labelled with its name only.
type cluster struct {
	objects map[string]*unstructured.Unstructured
}

var _ webhook.Cluster = (*cluster)(nil)

func (c *cluster) Object(_ context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	if o, ok := c.objects[gvr.Resource+"/"+namespace+"/"+name]; ok {
		return o.DeepCopy(), nil
	}
	return nil, fmt.Errorf("reading %s %s/%s: not found", gvr.Resource, namespace, name)
}

func (c *cluster) Revisions(context.Context, *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return nil, nil
}

func (c *cluster) NamespaceLabels(_ context.Context, name string) (map[string]string, error) {
	return map[string]string{"kubernetes.io/metadata.name": name}, nil
}
