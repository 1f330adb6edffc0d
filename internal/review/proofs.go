package review

import (
	"context"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// RemovalProver is the part of a Cluster that asks the API server whether
// removing a field sticks (kube.Cluster.RemovalSticks: a server-side dry
// run of the removal, cached per object and shape). It is optional: a
// Cluster without it (an offline one) leaves every orphan to merge's
// judgement, ownership and the table of defaults.
type RemovalProver interface {
	RemovalSticks(ctx context.Context, gvr schema.GroupVersionResource, live, target *unstructured.Unstructured, pointer string, with ...string) (kube.RemovalVerdict, error)
}

var _ RemovalProver = (*kube.Cluster)(nil)

// maxRemovalProofs bounds the dry runs of one review; further orphans keep
// merge's judgement.
const maxRemovalProofs = 8

// proveOrphans keeps the orphans of an apply whose removal sticks: a value
// the API server would put straight back (a default of a discriminator a
// person changed, a field derived from a sibling, an allocated value) or
// that it refuses to remove is no orphan, whoever owns it. Each orphan is
// proved alone, with the remove command the warning prints, so that of two
// mirrored fields (a Service's clusterIP and clusterIPs) neither is an
// orphan: removing either brings it back from the other. An orphan whose
// proof cannot be made (no prover, forbidden, timed out, an API error)
// keeps merge's judgement, which is today's table of defaults: the rule
// is never silently off, and the prover counts and the log says so.
func (r *Reviewer) proveOrphans(ctx context.Context, u Update, w write, class policy.Classification, an *merge.Analysis) {
	prover, ok := r.cluster.(RemovalProver)
	if !ok || an == nil || len(an.Orphans) == 0 || (class != policy.ClientSideApply && class != policy.ServerSideApply) {
		return
	}
	drop := make([]bool, len(an.Orphans))
	var wg sync.WaitGroup
	for i, o := range an.Orphans {
		if i >= maxRemovalProofs {
			break
		}
		pointer, ok := merge.JSONPointer(w.new.Object, o.Path)
		if !ok {
			continue
		}
		wg.Go(func() {
			v, err := prover.RemovalSticks(ctx, u.Resource, w.old, w.new, pointer, merge.RemovedWith(w.new.Object, o.Path)...)
			if err != nil {
				logr.FromContextOrDiscard(ctx).Info("removal not proved, the orphan keeps the table's judgement",
					"path", o.Path.String(), "error", err.Error())
				return
			}
			drop[i] = v != kube.RemovalSticks
		})
	}
	wg.Wait()
	kept := an.Orphans[:0]
	for i, o := range an.Orphans {
		if !drop[i] {
			kept = append(kept, o)
		}
	}
	an.Orphans = kept
}
