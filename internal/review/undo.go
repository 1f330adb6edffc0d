package review

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// undo recognizes a rollout undo. It returns the old object to analyze the
// write against and the rollback, nil when the write is no undo. After
// apply-hygiene's own repair (the mutating pass) last-applied differs
// between old and new: the templates are then compared under the repaired
// last-applied. A write that looks like an undo (undoLike) but whose
// template matches no revision is an unconfirmed undo: rules warn about it
// and never deny nor repair it.
func (r *Reviewer) undo(ctx context.Context, w write) (*unstructured.Unstructured, *merge.Rollback, error) {
	if !undoCandidate(w) {
		return w.old, nil, nil
	}
	old := withLastApplied(w.old, lastApplied(w.new))
	rb, err := r.rollback(ctx, old, w.new)
	if err != nil {
		return nil, nil, err
	}
	if rb != nil {
		return old, rb, nil
	}
	if !undoLike(w) {
		return w.old, nil, nil
	}
	rb, err = r.analyzer.UnconfirmedRollback(w.old, w.new)
	if err != nil {
		return nil, nil, fmt.Errorf("describing the undo-like write of %s %s/%s: %w", w.new.GetKind(), w.new.GetNamespace(), w.new.GetName(), err)
	}
	return w.old, rb, nil
}

func (r *Reviewer) rollback(ctx context.Context, old, new *unstructured.Unstructured) (*merge.Rollback, error) {
	revisions, err := r.cluster.Revisions(ctx, new)
	if err != nil {
		return nil, err
	}
	rb, err := r.analyzer.DetectRollback(old, new, revisions)
	if err != nil {
		return nil, fmt.Errorf("detecting a rollback of %s %s/%s: %w", new.GetKind(), new.GetNamespace(), new.GetName(), err)
	}
	return rb, nil
}

func withLastApplied(obj *unstructured.Unstructured, value string) *unstructured.Unstructured {
	if lastApplied(obj) == value || value == "" {
		return obj
	}
	c := obj.DeepCopy()
	merge.SetLastApplied(c, value)
	return c
}
