package orphanproof

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// Prover asks the API server whether removing a field sticks
// (kube.Cluster.RemovalSticks: a server-side dry run of the removal,
// its verdict kept for the same write).
type Prover interface {
	RemovalSticks(ctx context.Context, gvr schema.GroupVersionResource, live, target *unstructured.Unstructured, pointer string, with ...string) (kube.RemovalVerdict, error)
}

var _ Prover = (*kube.Cluster)(nil)

// MaxProofs bounds the dry runs for one object; further orphans keep
// merge's judgement.
const MaxProofs = 8

// Keep drops from an.Orphans each orphan of target, of resource gvr, whose
// removal does not stick, by the prover's dry run of the removal from live
// (the object before the write; target itself in the audit). Each orphan
// is proved alone, with the removal the warning prints, so that of two
// mirrored fields (a Service's clusterIP and clusterIPs) neither is an
// orphan: removing either brings it back from the other. The first
// MaxProofs orphans are proved, parallel at a time (at least one). A
// panic of a proof is logged with its stack and raised again on the
// caller's goroutine. An orphan whose proof cannot be
// made (not addressable, forbidden, timed out, an API error) keeps merge's
// judgement, the table of defaults: the rule is never silently off, and
// the log says so.
func Keep(ctx context.Context, prover Prover, gvr schema.GroupVersionResource, live, target *unstructured.Unstructured, an *merge.Analysis, parallel int) {
	if prover == nil || an == nil || len(an.Orphans) == 0 {
		return
	}
	drop := make([]bool, len(an.Orphans))
	panics := make([]any, len(an.Orphans))
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	for i, o := range an.Orphans {
		if i >= MaxProofs {
			break
		}
		pointer, ok := merge.JSONPointer(target.Object, o.Path)
		if !ok {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			defer func() {
				// A panic on this goroutine would end the process:
				// it is logged with its stack here and raised again
				// on the caller's, whose recover answers it.
				if p := recover(); p != nil {
					logr.FromContextOrDiscard(ctx).Error(fmt.Errorf("%v", p), "a removal proof panicked",
						"object", merge.RefOf(target), "path", o.Path.String(), "stack", string(debug.Stack()))
					panics[i] = p
				}
			}()
			v, err := prover.RemovalSticks(ctx, gvr, live, target, pointer, merge.RemovedWith(target.Object, o.Path)...)
			if err != nil {
				logr.FromContextOrDiscard(ctx).Info("removal not proved, the orphan keeps the table's judgement",
					"object", merge.RefOf(target), "path", o.Path.String(), "error", err.Error())
				return
			}
			drop[i] = v != kube.RemovalSticks
		})
	}
	wg.Wait()
	for _, p := range panics {
		if p != nil {
			panic(p)
		}
	}
	kept := an.Orphans[:0]
	for i, o := range an.Orphans {
		if !drop[i] {
			kept = append(kept, o)
		}
	}
	an.Orphans = kept
	proveTogether(ctx, prover, gvr, live, target, an.Orphans)
}

// proveTogether asks the prover once about the removal of every orphan
// that a remedy can remove (those with a Pointer) in one write, as a
// prune removes them: two fields can each go alone and not together (the
// only two ports of a Service, added by hand). When the API server
// refuses them together, none keeps its Pointer, RemovedWith or
// RemovePatch: each is still reported, with kubectl edit as its remedy,
// and nothing prunes them. An orphan alone, or a proof that cannot be
// made, keeps what it has, as in Keep.
func proveTogether(ctx context.Context, prover Prover, gvr schema.GroupVersionResource, live, target *unstructured.Unstructured, orphans []merge.FieldFact) {
	var removable []int
	var with []string
	for i, o := range orphans {
		if o.Pointer == "" {
			continue
		}
		if len(removable) > 0 {
			with = append(with, o.Pointer)
		}
		with = append(with, o.RemovedWith...)
		removable = append(removable, i)
	}
	if len(removable) < 2 {
		return
	}
	first := orphans[removable[0]]
	v, err := prover.RemovalSticks(ctx, gvr, live, target, first.Pointer, with...)
	if err != nil {
		logr.FromContextOrDiscard(ctx).Info("removal of the orphans together not proved, each keeps its remedy",
			"object", merge.RefOf(target), "orphans", len(removable), "error", err.Error())
		return
	}
	if v != kube.RemovalRejected {
		return
	}
	for _, i := range removable {
		orphans[i].Pointer, orphans[i].RemovedWith, orphans[i].RemovePatch = "", nil, ""
	}
}
