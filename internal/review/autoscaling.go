package review

import (
	"context"

	"github.com/go-logr/logr"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// AutoscalerCluster is a Cluster that also finds the
// HorizontalPodAutoscalers scaling an object; a *kube.Cluster is one (from
// its informer cache in the server). The review asks for them when its
// Cluster has the method: a Cluster without it (a captured review, a test)
// gives no autoscaling facts, as an unsynced cache does.
type AutoscalerCluster interface {
	// Autoscalers returns the HorizontalPodAutoscalers whose
	// spec.scaleTargetRef names obj.
	Autoscalers(ctx context.Context, obj *unstructured.Unstructured) ([]*autoscalingv2.HorizontalPodAutoscaler, error)
}

var _ AutoscalerCluster = (*kube.Cluster)(nil)

// autoscaling returns the autoscaling facts of a write of w.new: the
// autoscalers that scale it and, for an apply, the replicas its manifest
// sets. nil when none scales it, for a cluster-scoped object, and when
// they cannot be known: the lookup failing (the server's cache not synced
// yet, say) is logged and leaves the fact out, so that the rules decide
// without it; it never fails the review nor denies.
func (r *Reviewer) autoscaling(ctx context.Context, w write, class policy.Classification) *policy.Autoscaling {
	ac, ok := r.cluster.(AutoscalerCluster)
	if !ok || w.new.GetNamespace() == "" {
		return nil
	}
	logger := logr.FromContextOrDiscard(ctx)
	hpas, err := ac.Autoscalers(ctx, w.new)
	if err != nil {
		logger.Error(err, "autoscalers unknown, reviewing without them", "kind", w.new.GetKind(), "namespace", w.new.GetNamespace(), "name", w.new.GetName())
		return nil
	}
	if len(hpas) == 0 {
		return nil
	}
	out := &policy.Autoscaling{Autoscalers: make([]policy.Autoscaler, len(hpas))}
	for i, h := range hpas {
		out.Autoscalers[i] = autoscalerOf(h)
	}
	if class != policy.ClientSideApply && class != policy.ServerSideApply {
		return out
	}
	replicas, set, err := merge.ManifestReplicas(w.new, w.manager, class == policy.ServerSideApply)
	if err != nil {
		logger.Error(err, "manifest replicas unknown, reviewing without them", "kind", w.new.GetKind(), "namespace", w.new.GetNamespace(), "name", w.new.GetName())
		return out
	}
	if set {
		out.ManifestReplicas = replicas
	}
	return out
}

// autoscalerOf is what the policies see of h.
func autoscalerOf(h *autoscalingv2.HorizontalPodAutoscaler) policy.Autoscaler {
	a := policy.Autoscaler{
		Name:            h.Name,
		MinReplicas:     1,
		MaxReplicas:     int64(h.Spec.MaxReplicas),
		CurrentReplicas: int64(h.Status.CurrentReplicas),
		DesiredReplicas: int64(h.Status.DesiredReplicas),
	}
	if h.Spec.MinReplicas != nil {
		a.MinReplicas = int64(*h.Spec.MinReplicas)
	}
	return a
}
