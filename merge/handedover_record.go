package merge

import (
	"encoding/json"
	"slices"
	"strings"
)

// HandedOverAnnotation records the fields that `kubectl hygiene handover`
// handed over to another writer, as a JSON list of paths in kubectl's
// notation (the messages' spelling). kubectl keeps no such record: once a
// field leaves last-applied, a later write of it by a person looks like
// any field a person set outside apply, and without the record the
// orphan facts would report the field the person was told to hand over
// (and audit --fix and prune would remove it). The hand-over writes it
// in the same guarded patch as last-applied.
const HandedOverAnnotation = "apply-hygiene.io/handed-over"

// HandedOver returns the paths that obj's record (HandedOverAnnotation)
// lists, each as Path.String spells it; none when obj has no record, or
// one that is not a JSON list of strings. A record written by hand is
// read (`metadata.labels[team]` is `metadata.labels.team`); a path in it
// that does not parse is left out.
func HandedOver(obj map[string]any) []string {
	meta, _ := obj["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	raw, _ := annotations[HandedOverAnnotation].(string)
	var listed []string
	if raw == "" || json.Unmarshal([]byte(raw), &listed) != nil {
		return nil
	}
	paths := make([]string, 0, len(listed))
	for _, s := range listed {
		if p, err := ParsePath(s); err == nil && len(p) > 0 {
			paths = append(paths, p.String())
		}
	}
	return paths
}

// RecordHandedOver returns the value of obj's record with paths added:
// sorted, each once.
func RecordHandedOver(obj map[string]any, paths []string) (string, error) {
	all := slices.Concat(HandedOver(obj), paths)
	slices.Sort(all)
	raw, err := json.Marshal(slices.Compact(all))
	if err != nil {
		return "", err
	}
	return string(raw), nil
}

// handedOverAt reports whether the field at key (kubectl notation) is a
// field that record lists, lies inside one, or holds one (a struct
// reported whole would be removed with the field handed over).
func handedOverAt(record []string, key string) bool {
	inside := func(inner, outer string) bool {
		return strings.HasPrefix(inner, outer+".") || strings.HasPrefix(inner, outer+"[")
	}
	return slices.ContainsFunc(record, func(p string) bool { return p == key || inside(key, p) || inside(p, key) })
}
