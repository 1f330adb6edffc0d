package merge

import (
	"encoding/json"
	"errors"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// HandedOverAnnotation records the fields that `kubectl hygiene handover`
// handed over to another writer, as a JSON list of paths in kubectl's
// notation (Path.String). kubectl keeps no such record: once a field
// leaves last-applied, a later write of it by a person looks like any
// field a person set outside apply, and without the record the orphan
// facts would report the field the person was told to hand over (and
// audit --fix and prune would remove it). The hand-over writes it right
// before last-applied, as HandoverRecordManager.
const HandedOverAnnotation = "apply-hygiene.io/handed-over"

// HandoverRecordManager is the field manager of `kubectl hygiene
// handover`'s write of HandedOverAnnotation: its own, never one that owns
// last-applied, which kubectl apply --server-side's migration would give
// the record to the server-side applier with.
const HandoverRecordManager = "kubectl-hygiene-handover"

// recordEntries returns the strings of obj's record, as written, and
// whether obj has a record that is a JSON list (an entry that is no
// string is left out).
func recordEntries(obj map[string]any) ([]string, bool) {
	meta, _ := obj["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	raw, ok := annotations[HandedOverAnnotation].(string)
	if !ok {
		return nil, true
	}
	var listed []any
	if json.Unmarshal([]byte(raw), &listed) != nil {
		return nil, false
	}
	var out []string
	for _, e := range listed {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out, true
}

// HandedOver returns the paths that obj's record (HandedOverAnnotation)
// lists, each as Path.String spells it; none when obj has no record, or
// one that is not a JSON list. A record written by hand is read
// (`metadata.labels[team]` is `metadata.labels.team`); an entry that is no
// path is left out, the others kept.
func HandedOver(obj map[string]any) []string {
	entries, _ := recordEntries(obj)
	paths := make([]string, 0, len(entries))
	for _, s := range entries {
		if p, err := ParsePath(s); err == nil && len(p) > 0 {
			paths = append(paths, p.String())
		}
	}
	return paths
}

// RecordHandedOver returns the value of obj's record with paths added,
// sorted, each once: an entry already there is kept as written, even one
// that is no path, and a Secret's stringData.K is recorded as data.K, the
// field the orphan facts name (the server stores stringData in data). It
// refuses a record that is not a JSON list, which it would lose.
func RecordHandedOver(obj map[string]any, paths []Path) (string, error) {
	entries, ok := recordEntries(obj)
	if !ok {
		return "", errors.New("its " + HandedOverAnnotation + " annotation is not a JSON list of paths: fix or delete it first")
	}
	for _, p := range paths {
		if obj["kind"] == "Secret" && len(p) > 0 && p[0].FieldName != nil && *p[0].FieldName == "stringData" {
			p = append(Path{fieldName("data")}, p[1:]...)
		}
		entries = append(entries, p.String())
	}
	slices.Sort(entries)
	raw, err := json.Marshal(slices.Compact(entries))
	if err != nil {
		return "", err
	}
	return string(raw), nil
}

// handedOverAt reports whether the field at key (kubectl notation) is a
// field that record lists, lies inside one, or holds one (a struct
// reported whole would be removed with the field handed over; its other
// fields go unreported).
func handedOverAt(record []string, key string) bool {
	return slices.ContainsFunc(record, func(p string) bool { return within(key, p) || within(p, key) })
}

// droppedRecord returns old's record when the write that turned old into
// new, an undo of an apps Deployment, dropped or changed it; nil when it
// kept it. kubectl's rollout undo sets a Deployment's annotations to the
// restored ReplicaSet's, keeping last-applied and the revision's own
// (annotationsToSkip in k8s.io/kubectl's rollback.go) but not the record:
// a hand-over written after that ReplicaSet was the current one loses its
// record while last-applied, which the hand-over changed, stays, and the
// fields it handed over would then be reported as orphans. Fits says
// whether new's annotations, with the record written back and with
// repairedLastApplied as last-applied when it is not empty, stay within
// AnnotationsLimit.
func droppedRecord(old, new *unstructured.Unstructured, repairedLastApplied string) *HandoverRecord {
	value, ok := old.GetAnnotations()[HandedOverAnnotation]
	if !ok || !isAppsDeployment(new) {
		return nil
	}
	if after, kept := new.GetAnnotations()[HandedOverAnnotation]; kept && after == value {
		return nil
	}
	written := map[string]string{HandedOverAnnotation: value}
	if repairedLastApplied != "" {
		written[LastAppliedAnnotation] = repairedLastApplied
	}
	return &HandoverRecord{Value: value, Paths: HandedOver(old.Object), Fits: annotationsFit(new, written)}
}

// RecordDroppedByApply returns old's record when an apply (client- or
// server-side) that turned old into new left none; nil when new keeps a
// record, even another one (an applied manifest that sets it), when a
// client-side apply removed it on purpose (a manifest that sets it to
// null, which new's last-applied records), or when old has none that
// lists a path. A server-side applier's entry that owns the record tells
// nothing: kubectl apply --server-side's migration gives it the record
// with last-applied when their writer owned both. The record is
// apply-hygiene's, never a manifest's, yet applies drop it: a client-side
// apply once kubectl's --save-config (kubectl edit, kubectl replace,
// kubectl apply set-last-applied of an exported object) copied it into
// last-applied and the manifest lacks it, a server-side apply whose
// applier came to own the annotations it sat among (generative seed
// 281189, sequence 010: a StatefulSet's record gone with last-applied at
// kubectl apply --server-side --field-manager=platform). Without it, the
// fields a person handed over are reported as orphans again, pruned where
// orphaned-field prunes and removed by the audit's fix. Removing it on
// purpose is also kubectl annotate's job, which no rule writes back.
func RecordDroppedByApply(old, new *unstructured.Unstructured) *HandoverRecord {
	value, ok := old.GetAnnotations()[HandedOverAnnotation]
	if !ok {
		return nil
	}
	if _, kept := new.GetAnnotations()[HandedOverAnnotation]; kept {
		return nil
	}
	if nulledRecord(new.GetAnnotations()[LastAppliedAnnotation]) {
		return nil
	}
	paths := HandedOver(old.Object)
	if len(paths) == 0 {
		return nil
	}
	return &HandoverRecord{
		Value: value, Paths: paths,
		Fits:          recordFits(new, value),
		NoAnnotations: len(new.GetAnnotations()) == 0,
	}
}

// recordField is the record (HandedOverAnnotation) as a field path.
var recordField = Path{fieldName("metadata"), fieldName("annotations"), fieldName(HandedOverAnnotation)}

// nulledRecord reports whether the manifest that lastApplied records sets
// the record (HandedOverAnnotation) to null: kubectl apply then deletes it
// on purpose.
func nulledRecord(lastApplied string) bool {
	var manifest struct {
		Metadata struct {
			Annotations map[string]any `json:"annotations"`
		} `json:"metadata"`
	}
	if json.Unmarshal([]byte(lastApplied), &manifest) != nil {
		return false
	}
	v, ok := manifest.Metadata.Annotations[HandedOverAnnotation]
	return ok && v == nil
}

// recordFits reports whether obj's annotations, with the record set to
// value, stay within AnnotationsLimit, and under TooLargeThreshold when
// they were: last-applied-too-large would otherwise decide on a write
// that was under it because of apply-hygiene's own record, and may deny
// it.
func recordFits(obj *unstructured.Unstructured, value string) bool {
	size, with := AnnotationsSize(obj), annotationsSizeWith(obj, map[string]string{HandedOverAnnotation: value})
	return with <= AnnotationsLimit && (with <= TooLargeThreshold || size > TooLargeThreshold)
}
