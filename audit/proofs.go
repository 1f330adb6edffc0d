package audit

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/internal/orphanproof"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// RemovalProver is the optional part of a Cluster that asks the API
// server whether removing a field sticks: the admission's own proof
// (internal/orphanproof).
type RemovalProver = orphanproof.Prover

// proveOrphans keeps the orphans of obj, of resource gvr, whose removal
// sticks: a value the API server would put straight back, or refuses to
// remove, is no finding (and no fix). An orphan whose proof cannot be
// made keeps merge's judgement (ownership and the table of defaults).
func (sc *scan) proveOrphans(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, an *merge.Analysis) {
	prover, ok := sc.opts.cluster.(RemovalProver)
	if !ok || !sc.opts.removalProofs {
		return
	}
	// One proof at a time: the audit shares the server's API client (and
	// its rate limit) with the webhook, whose proofs must not wait
	// behind a scan's.
	orphanproof.Keep(ctx, prover, gvr, obj, obj, an, 1)
}
