package merge

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// RepairedRollback recognizes a rollout undo whose last-applied the
// mutating pass already repaired (DetectRollback's RepairedLastApplied)
// when a mutating webhook called after that pass changed the restored pod
// template (a policy engine that labels every pod template): new's
// template then equals no revision, but new's last-applied is exactly the
// repair that DetectRollback computes from old when new's template is a
// revision's, as the undo wrote it. It returns that undo as DetectRollback
// reports it once repaired (Confirmed, StaleLastApplied false, Changes
// the template fields that the undo itself changed), nil when new's
// last-applied is no such repair: whether the writer left last-applied
// alone is the caller's judgement (managedFields). old is the object as
// stored, with its own last-applied.
func (a *Analyzer) RepairedRollback(old, new *unstructured.Unstructured, revisions []*unstructured.Unstructured) (*Rollback, error) {
	before, repaired := old.GetAnnotations()[LastAppliedAnnotation], new.GetAnnotations()[LastAppliedAnnotation]
	if before == "" || repaired == "" || before == repaired {
		return nil, nil
	}
	for _, rev := range revisionsOf(revisions, new) {
		undone := new.DeepCopy()
		SetLastApplied(undone, before)
		if err := unstructured.SetNestedField(undone.Object, runtimeDeepCopy(rev.template.(map[string]any)), "spec", "template"); err != nil {
			return nil, fmt.Errorf("restoring the template of %s %s: %w", rev.kind, rev.name, err)
		}
		rb, err := a.DetectRollback(old, undone, revisions)
		if err != nil {
			return nil, err
		}
		if rb == nil || rb.RepairedLastApplied != repaired {
			continue
		}
		stored := old.DeepCopy()
		SetLastApplied(stored, repaired)
		SetLastApplied(undone, repaired)
		return a.DetectRollback(stored, undone, revisions)
	}
	return nil, nil
}
