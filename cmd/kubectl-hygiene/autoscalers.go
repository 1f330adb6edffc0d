package main

import (
	"context"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/internal/review"
)

var _ review.AutoscalerCluster = judgeCluster{}

// Autoscalers gives the review core the HorizontalPodAutoscalers that
// scale obj, as the server's cache has them: listed in obj's namespace
// when connected, none offline (--live), where diff cannot know them.
func (c judgeCluster) Autoscalers(ctx context.Context, obj *unstructured.Unstructured) ([]*autoscalingv2.HorizontalPodAutoscaler, error) {
	if c.j.autoscalers == nil {
		return nil, nil
	}
	return c.j.autoscalers(ctx, obj)
}

// autoscalers lists the HorizontalPodAutoscalers that scale obj (one list
// call in its namespace; the server keeps a cache instead).
func (c *cluster) autoscalers(ctx context.Context, obj *unstructured.Unstructured) ([]*autoscalingv2.HorizontalPodAutoscaler, error) {
	return kube.ListAutoscalers(ctx, c.dynamic, obj)
}
