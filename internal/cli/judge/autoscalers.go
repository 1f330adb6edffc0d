package judge

import (
	"context"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
)

var _ review.AutoscalerCluster = judgeCluster{}

// Autoscalers gives the review core the HorizontalPodAutoscalers that
// scale obj, as the server's cache has them: listed in obj's namespace
// when connected, none offline (--live), where diff cannot know them.
func (c judgeCluster) Autoscalers(ctx context.Context, obj *unstructured.Unstructured) ([]*autoscalingv2.HorizontalPodAutoscaler, error) {
	if c.j.Autoscalers == nil {
		return nil, nil
	}
	return c.j.Autoscalers(ctx, obj)
}
