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
// last-applied, and when a mutating webhook called after that pass changed
// the restored template, the undo is recognized by that repair
// (rollback). A write that looks like an undo (undoLike,
// undoDroppingFields or undoOfPodSpec) but whose template matches no revision is an
// unconfirmed undo: rules warn about it and never deny nor repair it.
func (r *Reviewer) undo(ctx context.Context, w write) (*unstructured.Unstructured, *merge.Rollback, error) {
	if !undoCandidate(w) {
		return w.old, nil, nil
	}
	revisions, err := r.cluster.Revisions(ctx, w.new)
	if err != nil {
		return nil, nil, err
	}
	old := withLastApplied(w.old, lastApplied(w.new))
	rb, err := r.rollback(w, old, revisions)
	if err != nil {
		return nil, nil, err
	}
	if rb != nil {
		return old, rb, nil
	}
	if !undoLike(w) && !undoDroppingFields(w, revisions) && !undoOfPodSpec(w, revisions) {
		return w.old, nil, nil
	}
	rb, err = r.analyzer.UnconfirmedRollback(w.old, w.new)
	if err != nil {
		return nil, nil, fmt.Errorf("describing the undo-like write of %s %s/%s: %w", w.new.GetKind(), w.new.GetNamespace(), w.new.GetName(), err)
	}
	return w.old, rb, nil
}

// rollback returns the rollout undo that w is, nil when its template
// matches none of revisions (the object's): the template equals a revision's (DetectRollback,
// with old, w's old object under w's new last-applied), or, when a
// mutating webhook and not the writer changed last-applied
// (lastAppliedRepaired), that last-applied is the mutating pass's repair
// of the undo to a revision, whose template a webhook called after that
// pass changed (merge.RepairedRollback): judged as the writer's, that
// repair made the undo a client-side apply of it.
func (r *Reviewer) rollback(w write, old *unstructured.Unstructured, revisions []*unstructured.Unstructured) (*merge.Rollback, error) {
	new := w.new
	rb, err := r.analyzer.DetectRollback(old, new, revisions)
	if err == nil && rb == nil && lastAppliedRepaired(w) {
		rb, err = r.analyzer.RepairedRollback(w.old, new, revisions)
	}
	if err != nil {
		return nil, fmt.Errorf("detecting a rollback of %s %s/%s: %w", new.GetKind(), new.GetNamespace(), new.GetName(), err)
	}
	return rb, nil
}

// undoDroppingFields reports whether w has the shape of an undo
// (undoShaped) and restores a
// revision's template less some fields (merge.RestoresRevisionLessFields),
// whatever its manager's name: an older kubectl's rollout undo drops the
// fields newer than it, and a renamed or symlinked kubectl binary
// (kubectl.1.32, k) names the write after itself. undoCandidate holds.
func undoDroppingFields(w write, revisions []*unstructured.Unstructured) bool {
	return undoShaped(w) && merge.RestoresRevisionLessFields(w.old, w.new, revisions)
}

// undoOfPodSpec reports whether w has the shape of an undo (undoShaped)
// and restores a revision's pod spec under the template's metadata as it
// was (merge.RestoresRevisionSpec), whatever its manager's name: the
// Kubernetes Dashboard's rollback copies only the ReplicaSet's
// template.spec, so after a restart its template matches no revision.
// undoCandidate holds: a client that names its field manager (kubectl set
// image back to the previous image, kubectl edit) is no undo.
func undoOfPodSpec(w write, revisions []*unstructured.Unstructured) bool {
	return undoShaped(w) && merge.RestoresRevisionSpec(w.old, w.new, revisions)
}

// lastAppliedRepaired reports whether a mutating webhook, not the writer,
// changed w's last-applied (merge.ChangedByAdmission: its managedFields
// owners are old's, times included), as apply-hygiene's repair of an undo
// does.
func lastAppliedRepaired(w write) bool {
	if lastApplied(w.old) == "" || lastApplied(w.old) == lastApplied(w.new) {
		return false
	}
	return annotationStamped(w.old, w.new, lastAppliedAnnotation)
}

// withLastApplied returns obj with last-applied value, itself when it
// already has it or value is empty.
func withLastApplied(obj *unstructured.Unstructured, value string) *unstructured.Unstructured {
	if lastApplied(obj) == value || value == "" {
		return obj
	}
	c := obj.DeepCopy()
	merge.SetLastApplied(c, value)
	return c
}
