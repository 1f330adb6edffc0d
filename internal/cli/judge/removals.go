package judge

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

var _ review.RemovalProver = judgeCluster{}

// RemovalSticks gives the review core the removal proofs of the server
// (kube.Cluster.RemovalSticks), with the user's own credentials when
// connected, so that diff predicts the orphans the webhook reports; none
// offline (--live), where the orphans keep merge's judgement as they do
// when the server cannot make a proof.
func (c judgeCluster) RemovalSticks(ctx context.Context, _ schema.GroupVersionResource, live, target *unstructured.Unstructured, pointer string, with ...string) (kube.RemovalVerdict, error) {
	if c.j.Removals == nil {
		return "", errors.New("no removal proof offline")
	}
	return c.j.Removals(ctx, live, target, pointer, with...)
}

// proveLiveOrphans drops from ex, obj's explanation, the orphans whose
// removal the API server would undo (put back or refuse), as the audit
// does: from the findings and from the fields' status. Offline (--live),
// or when a proof cannot be made, an orphan stays as merge judges it.
func (j *Judge) proveLiveOrphans(ctx context.Context, obj *unstructured.Unstructured, ex *merge.Explanation) {
	if j.Removals == nil {
		return
	}
	kept := ex.Analysis.Orphans[:0]
	for i, o := range ex.Analysis.Orphans {
		pointer, ok := merge.JSONPointer(obj.Object, o.Path)
		if i >= maxLiveRemovalProofs || !ok {
			kept = append(kept, o)
			continue
		}
		if v, err := j.Removals(ctx, obj, obj, pointer, merge.RemovedWith(obj.Object, o.Path)...); err != nil || v == kube.RemovalSticks {
			kept = append(kept, o)
			continue
		}
		for k := range ex.Fields {
			if within(ex.Fields[k].Path, o.Path) {
				ex.Fields[k].Orphan = false
			}
		}
	}
	ex.Analysis.Orphans = kept
}

// maxLiveRemovalProofs bounds the dry runs for one object, as the audit
// does.
const maxLiveRemovalProofs = 8

// within reports whether p is q or a field inside it.
func within(p, q merge.Path) bool {
	return len(p) >= len(q) && p[:len(q)].Compare(q) == 0
}
