package review

import (
	"context"

	"github.com/apply-hygiene/apply-hygiene/internal/orphanproof"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// RemovalProver is the part of a Cluster that asks the API server whether
// removing a field sticks (internal/orphanproof). It is optional: a
// Cluster without it (an offline one) leaves every orphan to merge's
// judgement, ownership and the table of defaults.
type RemovalProver = orphanproof.Prover

// proveOrphans keeps the orphans of an apply whose removal sticks
// (orphanproof.Keep): only an apply's orphans are reported.
func (r *Reviewer) proveOrphans(ctx context.Context, u Update, w write, class policy.Classification, an *merge.Analysis) {
	prover, ok := r.cluster.(RemovalProver)
	if !ok || (class != policy.ClientSideApply && class != policy.ServerSideApply) {
		return
	}
	orphanproof.Keep(ctx, prover, u.Resource, w.old, w.new, an, orphanproof.MaxProofs)
}
