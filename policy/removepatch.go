package policy

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// patchOp is one RFC 6902 operation.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// RemovePatch returns a JSON patch (RFC 6902, for kubectl patch
// --type=json) that removes the field at p from obj, guarded by test
// operations so that it fails rather than remove something else: a list
// element is tested by its merge key, any other field by its value. The
// values of a Secret are never tested, so they never appear in the patch.
func RemovePatch(obj map[string]any, p merge.Path) (string, error) {
	ptr, ok := merge.JSONPointer(obj, p)
	if !ok || len(p) == 0 {
		return "", fmt.Errorf("building remove patch: no field %s", p)
	}
	value, _ := valueAt(obj, ptr)
	ops := guards(obj, p, ptr, value)
	ops = append(ops, patchOp{Op: "remove", Path: ptr})
	raw, err := json.Marshal(ops)
	if err != nil {
		return "", fmt.Errorf("building remove patch for %s: %w", p, err)
	}
	return string(raw), nil
}

// RemovePatches returns RemovePatch for every orphan of a that obj has,
// keyed by path, ready for Input.RemovePatches.
func RemovePatches(obj map[string]any, a *merge.Analysis) map[string]string {
	out := map[string]string{}
	if a == nil {
		return out
	}
	for _, o := range a.Orphans {
		if patch, err := RemovePatch(obj, o.Path); err == nil {
			out[o.Path.String()] = patch
		}
	}
	return out
}

func guards(obj map[string]any, p merge.Path, ptr string, value any) []patchOp {
	last := p[len(p)-1]
	switch {
	case last.Key != nil:
		ops := make([]patchOp, 0, len(*last.Key))
		for _, f := range *last.Key {
			ops = append(ops, patchOp{Op: "test", Path: ptr + "/" + escape(f.Name), Value: f.Value.Unstructured()})
		}
		return ops
	case obj["kind"] == "Secret" || value == nil:
		return nil
	}
	return []patchOp{{Op: "test", Path: ptr, Value: value}}
}

func escape(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }

// valueAt returns the value at an RFC 6901 pointer in obj.
func valueAt(obj map[string]any, ptr string) (any, bool) {
	var cur any = obj
	for _, token := range strings.Split(ptr, "/")[1:] {
		token = strings.NewReplacer("~1", "/", "~0", "~").Replace(token)
		switch t := cur.(type) {
		case map[string]any:
			v, ok := t[token]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(token)
			if err != nil || i < 0 || i >= len(t) {
				return nil, false
			}
			cur = t[i]
		default:
			return nil, false
		}
	}
	return cur, true
}
