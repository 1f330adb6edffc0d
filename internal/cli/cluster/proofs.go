package cluster

import (
	"context"
	"errors"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
)

// RemovalSticks proves a removal from the live object of target's kind
// with the API server (kube.Cluster.RemovalSticks), with the user's own
// credentials; an error from a Cluster that makes no proofs (New).
func (c *Cluster) RemovalSticks(ctx context.Context, live, target *unstructured.Unstructured, pointer string, with ...string) (kube.RemovalVerdict, error) {
	if c.prover == nil {
		return "", errors.New("no removal proof without a connection")
	}
	gvk := live.GroupVersionKind()
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", gvk, err)
	}
	return c.prover.RemovalSticks(ctx, mapping.Resource, live, target, pointer, with...)
}

// Autoscalers lists the HorizontalPodAutoscalers that scale obj (one list
// call in its namespace; the server keeps a cache instead).
func (c *Cluster) Autoscalers(ctx context.Context, obj *unstructured.Unstructured) ([]*autoscalingv2.HorizontalPodAutoscaler, error) {
	return kube.ListAutoscalers(ctx, c.dynamic, obj)
}
