package merge

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Revision annotations that the Deployment controller writes on ReplicaSets.
const (
	deploymentRevisionAnnotation = "deployment.kubernetes.io/revision"
	revisionHistoryAnnotation    = "deployment.kubernetes.io/revision-history"
)

// MayHaveStaleLastApplied reports whether live, analyzed on its own by
// AnalyzeLive into an, may carry a stale last-applied: an apps/v1
// Deployment, StatefulSet or DaemonSet with last-applied whose pod template
// drifted from it. Only then is it worth reading its revisions for
// StaleRollback.
func MayHaveStaleLastApplied(live *unstructured.Unstructured, an *Analysis) bool {
	if an.LastApplied.Status != LastAppliedPresent || live.GroupVersionKind().Group != "apps" {
		return false
	}
	switch live.GetKind() {
	case "Deployment", "StatefulSet", "DaemonSet":
		return templateDrift(an)
	}
	return false
}

// StaleRollback finds, in a stored object, the rollout undo that left its
// last-applied stale: live's pod template is an older revision than the one
// its last-applied describes, and live's managedFields prove that a
// rollout undo wrote it (undoWrote): kubectl edit, patch or set can restore
// an older template too, and their edits are not an undo's to explain
// away. The rollback and the last-applied that matches the restored
// template come from DetectRollback, as if the undo were the write from
// the described revision to live, so the audit and the webhook's undo
// repair judge revisions the same way. It returns nil when last-applied is
// not stale or the undo is not proven. revisions are the object's
// ReplicaSets or ControllerRevisions, as stored.
func (a *Analyzer) StaleRollback(live *unstructured.Unstructured, revisions []*unstructured.Unstructured) (*Rollback, error) {
	revs := make([]revision, 0, len(revisions))
	for _, r := range revisions {
		if rev, ok := revisionOf(r); ok {
			revs = append(revs, rev)
		}
	}
	current := currentRevision(live, revs)
	if current < 0 {
		return nil, nil
	}
	described, err := a.describedRevision(live, revs, current)
	if err != nil || described < 0 {
		return nil, err
	}
	if !restoredOlder(revs[current], revs[described], live.GetAnnotations()[LastAppliedAnnotation]) {
		return nil, nil
	}
	// The object before the undo, as far as it is known: without
	// managedFields, which are live's (the undo's manager owns what it
	// restored), so the repair takes as the applier's only the values
	// last-applied has.
	old := live.DeepCopy()
	old.SetManagedFields(nil)
	if err := unstructured.SetNestedField(old.Object, runtimeDeepCopy(revs[described].template.(map[string]any)), "spec", "template"); err != nil {
		return nil, fmt.Errorf("building the object before the undo: %w", err)
	}
	if proven, err := a.undoWrote(old, live); err != nil || !proven {
		return nil, err
	}
	rb, err := a.DetectRollback(old, live, revisions)
	if err != nil {
		return nil, fmt.Errorf("detecting a rollback: %w", err)
	}
	if rb == nil || !rb.StaleLastApplied {
		return nil, nil
	}
	// A ControllerRevision restored by an undo carries the last-applied
	// that made it; one that an edit made does not match its template.
	if revs[current].kind == "ControllerRevision" && rb.RepairSource != "controllerRevision" {
		return nil, nil
	}
	rb.LastAppliedUpdaters = LastAppliedUpdaters(live)
	return rb, nil
}

// undoWrote reports whether live's managedFields prove that a rollout
// undo wrote the template fields in which live differs from before, the
// object with the template last-applied describes: every such field that
// live has (changed or added: a removal leaves no owner) is owned by the
// undo's entries alone (IsUndoEntry), and there is at least one. A
// restored field that kubectl edit, patch or set, another tool, or nobody
// (managedFields stripped) owns proves no undo: the write was that
// writer's edit, whatever revision its template equals.
func (a *Analyzer) undoWrote(before, live *unstructured.Unstructured) (bool, error) {
	mfs, err := DecodeManagedFields(live)
	if err != nil {
		return false, err
	}
	diff, err := a.compareStored(before, live)
	if err != nil {
		return false, err
	}
	restored, proven := 0, true
	diff.Modified.Union(diff.Added).Leaves().Iterate(func(fp fieldpath.Path) {
		p := Path(fp)
		if !isTemplatePath(p) {
			return
		}
		restored++
		ows := owners(mfs, p)
		proven = proven && len(ows) > 0 && !slices.ContainsFunc(ows, func(o Owner) bool { return !IsUndoEntry(o) })
	})
	return proven && restored > 0, nil
}

// currentRevision returns the index of the last revision whose template is
// live's, -1 when there is none.
func currentRevision(live *unstructured.Unstructured, revs []revision) int {
	liveTemplate := stripNulls(at(live.Object, Path{fieldName("spec"), fieldName("template")}).v)
	current := -1
	for i, rev := range revs {
		if jsonEqual(stripNulls(rev.template), liveTemplate) {
			current = i
		}
	}
	return current
}

// describedRevision returns the index of the newest revision other than
// current whose pod template last-applied describes (no template field of
// last-applied differs from it), -1 when there is none.
func (a *Analyzer) describedRevision(live *unstructured.Unstructured, revs []revision, current int) (int, error) {
	best := -1
	for i, rev := range revs {
		if i == current || (best >= 0 && !newer(rev, revs[best])) {
			continue
		}
		probe := live.DeepCopy()
		if err := unstructured.SetNestedField(probe.Object, runtimeDeepCopy(rev.template.(map[string]any)), "spec", "template"); err != nil {
			return -1, fmt.Errorf("probing a revision: %w", err)
		}
		an, err := a.AnalyzeLive(probe)
		if err != nil {
			return -1, fmt.Errorf("probing a revision: %w", err)
		}
		if !templateDrift(an) {
			best = i
		}
	}
	return best, nil
}

func templateDrift(an *Analysis) bool {
	for _, f := range an.Drift {
		if strings.HasPrefix(f.Path.String(), "spec.template.") {
			return true
		}
	}
	return false
}

// newer orders revisions by creation, then by first number.
func newer(a, b revision) bool {
	if !a.created.Equal(b.created) {
		return a.created.After(b.created)
	}
	return a.first > b.first
}

// restoredOlder reports whether current, the revision of the live
// template, predates described, the one last-applied describes. Revision
// numbers cannot tell: the controllers renumber a revision that an undo
// restores. A ReplicaSet keeps its first number in the revision-history
// annotation; a ControllerRevision keeps the owner's annotations of when
// it was made, so one made under another last-applied, and not after the
// described one, is older.
func restoredOlder(current, described revision, lastApplied string) bool {
	if current.kind == "ReplicaSet" {
		return current.first < described.first
	}
	return current.lastApplied != "" &&
		strings.TrimSpace(current.lastApplied) != strings.TrimSpace(lastApplied) &&
		!current.created.After(described.created)
}

// firstNumber is the smallest revision number a ReplicaSet has had, by
// its controller's keys.
func firstNumber(annotations map[string]string, keys replicaSetKeys) int64 {
	first := int64(-1)
	for _, n := range numbersOf(annotations, keys) {
		if first < 0 || n < first {
			first = n
		}
	}
	return first
}

// numbersOf lists every revision number a ReplicaSet has had: its
// revision-history and its revision, by its controller's keys.
func numbersOf(annotations map[string]string, keys replicaSetKeys) []int64 {
	var out []int64
	values := strings.Split(annotations[keys.history], ",")
	for _, s := range append(values, annotations[keys.revision]) {
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			out = append(out, n)
		}
	}
	return out
}
