package merge

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// LastAppliedWithout returns obj's last-applied with the fields at paths
// deleted, written as kubectl writes the annotation (JSON with sorted
// keys and a final newline): the hand-over of those fields to another
// writer (kubectl scale, an autoscaler, a deploy robot), after which
// kubectl apply neither sets nor deletes them. A map or list that a
// deletion leaves empty goes too: left in last-applied, an empty one would
// make the next apply of a manifest without it delete the whole field,
// with the new writer's value. It fails, and nothing is to be written,
// when last-applied is missing or unusable, when a path is not in it, and
// when a path is the key of a list element (hand the element over
// instead).
//
// kubectl's own way, kubectl apply edit-last-applied, is an editor on the
// annotation; no library deletes fields from a last-applied document, so
// this does, on merge's paths.
func LastAppliedWithout(obj *unstructured.Unstructured, paths []Path) (string, error) {
	la, err := ParseLastApplied(obj)
	if err != nil {
		return "", err
	}
	doc := la.DeepCopy().Object
	var inDoc []Path
	for _, p := range paths {
		inDoc = append(inDoc, secretPaths(doc, p)...)
	}
	for _, p := range withoutNested(inDoc) {
		if len(p) == 0 {
			return "", fmt.Errorf("an empty path names the whole object")
		}
		if isElementKey(p) {
			return "", fmt.Errorf("%s is the key of its list element: hand over %s instead", p, p[:len(p)-1])
		}
		if _, ok := lookup(doc, p); !ok {
			return "", fmt.Errorf("last-applied has no %s", p)
		}
		removeAt(doc, p)
		for parent := p[:len(p)-1]; len(parent) > 0; parent = parent[:len(parent)-1] {
			v, _ := lookup(doc, parent)
			if !emptyContainer(v) {
				break
			}
			removeAt(doc, parent)
		}
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("encoding last-applied: %w", err)
	}
	return string(raw) + "\n", nil
}

// isElementKey reports whether p ends at a key field of the list element
// before it (containers[name=web].name).
func isElementKey(p Path) bool {
	if len(p) < 2 || p[len(p)-1].FieldName == nil || p[len(p)-2].Key == nil {
		return false
	}
	for _, f := range *p[len(p)-2].Key {
		if f.Name == *p[len(p)-1].FieldName {
			return true
		}
	}
	return false
}

// emptyContainer reports whether v is an empty map or list.
func emptyContainer(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

// withoutNested returns paths without repeats and without the paths that
// another of them contains (spec.a.b when spec.a is handed over too),
// which the deletion of the outer one hands over already.
func withoutNested(paths []Path) []Path {
	var out []Path
	for i, p := range paths {
		covered := false
		for j, q := range paths {
			if i != j && len(q) <= len(p) && fieldpath.Path(p[:len(q)]).Equals(fieldpath.Path(q)) && (len(q) < len(p) || j < i) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, p)
		}
	}
	return out
}

// secretPaths is where last-applied has the field at p. A Secret's key
// that the manifest gives as stringData is stored, reviewed and named in
// the messages as data's key (data.password): in last-applied it is
// stringData's (or both's, when the manifest gives it twice). Any other
// path is itself.
func secretPaths(doc map[string]any, p Path) []Path {
	if doc["kind"] != "Secret" || len(p) != 2 || p[0].FieldName == nil || *p[0].FieldName != "data" {
		return []Path{p}
	}
	stringData := "stringData"
	alias := Path{fieldpath.PathElement{FieldName: &stringData}, p[1]}
	var out []Path
	for _, q := range []Path{p, alias} {
		if _, ok := lookup(doc, q); ok {
			out = append(out, q)
		}
	}
	if len(out) == 0 {
		return []Path{p}
	}
	return out
}
