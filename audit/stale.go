package audit

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// Revision annotations and labels that the workload controllers write.
const (
	deploymentRevisionAnnotation = "deployment.kubernetes.io/revision"
	revisionHistoryAnnotation    = "deployment.kubernetes.io/revision-history"
	podTemplateHashLabel         = "pod-template-hash"
)

// staleCandidate reports whether obj may carry a stale last-applied: a
// workload with revisions whose pod template drifted from last-applied.
func staleCandidate(obj *unstructured.Unstructured, an *merge.Analysis) bool {
	if an.LastApplied.Status != merge.LastAppliedPresent || obj.GroupVersionKind().Group != "apps" {
		return false
	}
	switch obj.GetKind() {
	case "Deployment", "StatefulSet", "DaemonSet":
	default:
		return false
	}
	return templateDrift(an)
}

// revisionInfo is what the staleness check reads of one revision.
type revisionInfo struct {
	kind        string
	template    map[string]any
	number      int64 // for a ReplicaSet, the number it was created with
	created     time.Time
	lastApplied string // kept by a ControllerRevision
}

// staleRollback returns the rollback that explains live when its pod
// template is an older revision than the one its last-applied describes,
// nil otherwise. The rollback itself, and the last-applied that matches
// the restored template, come from merge's DetectRollback, as if the undo
// were the write from the described revision to live.
func staleRollback(a *merge.Analyzer, live *unstructured.Unstructured, revisions []*unstructured.Unstructured) (*merge.Rollback, error) {
	infos := make([]revisionInfo, 0, len(revisions))
	for _, r := range revisions {
		if info, ok := revisionInfoOf(r); ok {
			infos = append(infos, info)
		}
	}
	liveTemplate, _, _ := unstructured.NestedFieldNoCopy(live.Object, "spec", "template")
	current := -1
	for i, info := range infos {
		if equalTemplates(info.template, liveTemplate) {
			current = i
		}
	}
	if current < 0 {
		return nil, nil
	}
	described, err := describedRevision(a, live, infos, current)
	if err != nil || described < 0 {
		return nil, err
	}
	lastApplied := live.GetAnnotations()[merge.LastAppliedAnnotation]
	if !restoredOlder(infos[current], infos[described], lastApplied) {
		return nil, nil
	}
	old := live.DeepCopy()
	if err := unstructured.SetNestedField(old.Object, runtimeCopy(infos[described].template), "spec", "template"); err != nil {
		return nil, fmt.Errorf("building the object before the undo: %w", err)
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
	if infos[current].kind == "ControllerRevision" && rb.RepairSource != "controllerRevision" {
		return nil, nil
	}
	return rb, nil
}

// describedRevision returns the index of the newest revision other than
// current whose pod template last-applied describes (no template field of
// last-applied differs from it), -1 when there is none.
func describedRevision(a *merge.Analyzer, live *unstructured.Unstructured, infos []revisionInfo, current int) (int, error) {
	best := -1
	for i, info := range infos {
		if i == current || (best >= 0 && !newer(info, infos[best])) {
			continue
		}
		probe := live.DeepCopy()
		if err := unstructured.SetNestedField(probe.Object, runtimeCopy(info.template), "spec", "template"); err != nil {
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

func templateDrift(an *merge.Analysis) bool {
	for _, f := range an.Drift {
		if strings.HasPrefix(f.Path.String(), "spec.template.") {
			return true
		}
	}
	return false
}

// newer orders revisions by creation, then by number.
func newer(a, b revisionInfo) bool {
	if !a.created.Equal(b.created) {
		return a.created.After(b.created)
	}
	return a.number > b.number
}

// restoredOlder reports whether current, the revision of the live
// template, predates described, the one last-applied describes. Revision
// numbers cannot tell: the controllers renumber a revision that an undo
// restores. A ReplicaSet keeps its first number in the revision-history
// annotation; a ControllerRevision keeps the owner's annotations of when
// it was made, so one made under another last-applied, and not after the
// described one, is older.
func restoredOlder(current, described revisionInfo, lastApplied string) bool {
	if current.kind == "ReplicaSet" {
		return current.number < described.number
	}
	return current.lastApplied != "" &&
		strings.TrimSpace(current.lastApplied) != strings.TrimSpace(lastApplied) &&
		!current.created.After(described.created)
}

func revisionInfoOf(r *unstructured.Unstructured) (revisionInfo, bool) {
	info := revisionInfo{kind: r.GetKind(), created: r.GetCreationTimestamp().Time}
	switch r.GetKind() {
	case "ReplicaSet":
		tpl, ok, _ := unstructured.NestedMap(r.Object, "spec", "template")
		if !ok {
			return info, false
		}
		unstructured.RemoveNestedField(tpl, "metadata", "labels", podTemplateHashLabel)
		info.template = tpl
		info.number = firstNumber(r.GetAnnotations())
	case "ControllerRevision":
		tpl, ok, _ := unstructured.NestedMap(r.Object, "data", "spec", "template")
		if !ok {
			return info, false
		}
		delete(tpl, "$patch")
		info.template = tpl
		info.number, _, _ = unstructured.NestedInt64(r.Object, "revision")
		info.lastApplied = r.GetAnnotations()[merge.LastAppliedAnnotation]
	default:
		return info, false
	}
	return info, true
}

// firstNumber is the smallest revision number a ReplicaSet has had.
func firstNumber(annotations map[string]string) int64 {
	first := int64(-1)
	values := strings.Split(annotations[revisionHistoryAnnotation], ",")
	for _, s := range append(values, annotations[deploymentRevisionAnnotation]) {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err == nil && (first < 0 || n < first) {
			first = n
		}
	}
	return first
}

// equalTemplates compares pod templates as JSON, without null fields
// (creationTimestamp: null).
func equalTemplates(a, b any) bool {
	return reflect.DeepEqual(normalized(a), normalized(b))
}

func normalized(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(raw, &out) != nil {
		return nil
	}
	return withoutNulls(out)
}

func withoutNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			if x != nil {
				out[k] = withoutNulls(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = withoutNulls(x)
		}
		return out
	}
	return v
}

func runtimeCopy(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}
