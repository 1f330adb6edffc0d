package merge

import (
	"encoding/json"
	"fmt"
)

// setPatch returns the JSON patch (RFC 6902) that sets the field at p of
// obj to v: an add at p when its parent is there, else an add of the
// first ancestor that obj lacks (or has as null) with the rest of the path
// nested in its value, e.g. [{"op":"add","path":"/spec","value":{"replicas":5}}]
// for an object without spec. An error when an ancestor is something other
// than an object or null, or a missing one is not a field: nothing then
// says what to create.
func setPatch(obj map[string]any, p Path, v any) (string, error) {
	if len(p) == 0 {
		return "", fmt.Errorf("building set patch: no field")
	}
	// i is the length of the longest prefix of p that obj has as an
	// object.
	i := 0
	for ; i < len(p)-1; i++ {
		next, ok := lookup(obj, p[:i+1])
		if !ok || next == nil {
			break
		}
		if _, isMap := next.(map[string]any); !isMap {
			if _, isList := next.([]any); !isList || p[i+1].FieldName != nil {
				return "", fmt.Errorf("building set patch for %s: %s is neither an object nor null", p, p[:i+1])
			}
		}
	}
	parent, _ := JSONPointer(obj, p[:i]) // a prefix that exists
	value := v
	for j := len(p) - 1; j > i; j-- {
		if p[j].FieldName == nil {
			return "", fmt.Errorf("building set patch for %s: %s is missing", p, p[:j])
		}
		value = map[string]any{*p[j].FieldName: value}
	}
	if p[i].FieldName == nil {
		return "", fmt.Errorf("building set patch for %s: %s is missing", p, p[:i+1])
	}
	raw, err := json.Marshal([]patchOp{{Op: "add", Path: parent + "/" + escapePointer(*p[i].FieldName), Value: value}})
	if err != nil {
		return "", fmt.Errorf("building set patch for %s: %w", p, err)
	}
	return string(raw), nil
}
