package audit

import (
	"context"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// RemovalProver is the optional part of a Cluster that asks the API
// server whether removing a field sticks (kube.Cluster.RemovalSticks, the
// admission's own proof: see internal/kube's removal.go).
type RemovalProver interface {
	RemovalSticks(ctx context.Context, gvr schema.GroupVersionResource, live, target *unstructured.Unstructured, pointer string, with ...string) (kube.RemovalVerdict, error)
}

var _ RemovalProver = (*kube.Cluster)(nil)

// maxRemovalProofs bounds the dry runs for one object, as admission does;
// further orphans keep merge's judgement.
const maxRemovalProofs = 8

// proveOrphans keeps the orphans of obj, of resource gvr, whose removal
// sticks: a value the API server would put straight back, or refuses to
// remove, is no finding (and no fix). An orphan whose proof cannot be
// made keeps merge's judgement (ownership and the table of defaults).
func (sc *scan) proveOrphans(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, an *merge.Analysis) {
	prover, ok := sc.opts.cluster.(RemovalProver)
	if !ok || !sc.opts.removalProofs || len(an.Orphans) == 0 {
		return
	}
	kept := an.Orphans[:0]
	for i, o := range an.Orphans {
		pointer, ok := merge.JSONPointer(obj.Object, o.Path)
		if i >= maxRemovalProofs || !ok {
			kept = append(kept, o)
			continue
		}
		v, err := prover.RemovalSticks(ctx, gvr, obj, obj, pointer, merge.RemovedWith(obj.Object, o.Path)...)
		if err != nil {
			logr.FromContextOrDiscard(ctx).Info("removal not proved, the orphan keeps the table's judgement",
				"object", merge.RefOf(obj), "path", o.Path.String(), "error", err.Error())
		}
		if err != nil || v == kube.RemovalSticks {
			kept = append(kept, o)
		}
	}
	an.Orphans = kept
}
