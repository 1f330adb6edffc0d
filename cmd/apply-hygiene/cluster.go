package main

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/dynamic"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/internal/kube"
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
	c := kube.NewCluster(dyn, opts.NamespaceCacheTTL, kube.WithAutoscalers(autoscalers),
		kube.WithRemovalObserver(func(outcome string) { proofs.WithLabelValues(outcome).Inc() }))
	if !opts.RemovalProofs {
		return withoutProofs{c}, nil
	}
	return c, nil
}

// withoutProofs is a Cluster without its RemovalSticks: the review core
// then leaves every orphan to merge's judgement.
type withoutProofs struct{ webhook.Cluster }

// auditOptions are the periodic audit's: its removal proofs follow
// --removal-proofs, as admission's do.
func auditOptions(opts Options) []audit.Option {
	if !opts.RemovalProofs {
		return nil
	}
	return []audit.Option{audit.WithRemovalProofs()}
}
