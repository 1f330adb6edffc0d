package main

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/dynamic"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/webhook"
)

// reviewCluster is the cluster the reviews read: a kube.Cluster whose
// removal proofs are counted in apply_hygiene_removal_proofs_total, or,
// with --removal-proofs=false, the same without them.
func reviewCluster(dyn dynamic.Interface, opts Options, autoscalers *kube.Autoscalers) (webhook.Cluster, error) {
	proofs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apply_hygiene_removal_proofs_total",
		Help: "Removal proofs of orphaned fields, by outcome: sticks (an orphan), put_back and rejected (no orphan), cached, and error (not proved: the orphan keeps the table's judgement).",
	}, []string{"outcome"})
	if err := ctrlmetrics.Registry.Register(proofs); err != nil {
		return nil, fmt.Errorf("registering metrics: %w", err)
	}
	return clusterOf(dyn, opts, autoscalers, func(outcome string) { proofs.WithLabelValues(outcome).Inc() }), nil
}

// clusterOf is the kube.Cluster of the reviews, observing each removal
// proof's outcome, or, with --removal-proofs=false, the same without its
// removal proofs.
func clusterOf(dyn dynamic.Interface, opts Options, autoscalers *kube.Autoscalers, observe func(outcome string)) webhook.Cluster {
	c := kube.NewCluster(dyn, opts.NamespaceCacheTTL, kube.WithAutoscalers(autoscalers), kube.WithRemovalObserver(observe))
	if !opts.RemovalProofs {
		return withoutProofs{c}
	}
	return c
}

// withoutProofs is a Cluster without its RemovalSticks: the review core
// then leaves every orphan to merge's judgement. It keeps everything else
// the review core reads by type assertion (the autoscalers of
// replicas-autoscaled, the scale paths of custom resources): embedding
// webhook.Cluster alone hid them, so --removal-proofs=false silenced
// replicas-autoscaled and left every /scale of a custom resource
// unreviewed.
type withoutProofs struct{ proofless }

// proofless is what the reviews read of a kube.Cluster but its removal
// proofs.
type proofless interface {
	webhook.Cluster
	review.AutoscalerCluster
	review.ScaleCluster
}

var _ proofless = (*kube.Cluster)(nil)

// auditOptions are the periodic audit's: its removal proofs follow
// --removal-proofs, as admission's do.
func auditOptions(opts Options) []audit.Option {
	if !opts.RemovalProofs {
		return nil
	}
	return []audit.Option{audit.WithRemovalProofs()}
}
