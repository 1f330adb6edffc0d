package merge

import (
	"encoding/json"
	"fmt"
	"strings"
)

// patchOp is one RFC 6902 operation.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// maxGuardedValue bounds the JSON of a map or list that a remove patch
// tests: the API server keeps 1024 bytes of a warning, and the
// orphaned-field message shows the value as well. A field with a longer
// one (a whole struct that the server filled with defaults) gets no
// patch, and the message says to remove it with kubectl edit instead of
// printing a command that the warning would cut.
const maxGuardedValue = 128

// withRemovePatches sets the Pointer, the RemovedWith (withPointers) and
// the RemovePatch of each fact that obj has.
func withRemovePatches(obj map[string]any, facts []FieldFact) []FieldFact {
	facts = withPointers(obj, facts)
	for i := range facts {
		if facts[i].Pointer == "" {
			continue
		}
		if patch, err := removePatch(obj, facts[i].Path, facts[i].Pointer); err == nil {
			facts[i].RemovePatch = patch
		}
	}
	return facts
}

// withPointers sets the Pointer and the RemovedWith of each fact that obj
// has, unless its removal cannot stick (aliasDiffers) or is refused
// (removalRefused: then it is Frozen).
func withPointers(obj map[string]any, facts []FieldFact) []FieldFact {
	for i := range facts {
		ptr, ok := JSONPointer(obj, facts[i].Path)
		if !ok || len(facts[i].Path) == 0 || aliasDiffers(obj, facts[i].Path) {
			continue
		}
		if removalRefused(obj, facts[i].Path) {
			facts[i].Frozen = true
			continue
		}
		facts[i].Pointer = ptr
		facts[i].RemovedWith = RemovedWith(obj, facts[i].Path)
	}
	return facts
}

// removePatch returns a JSON patch (RFC 6902, for kubectl patch
// --type=json) that removes the field at p from obj, which has it at ptr
// (withPointers judged that its removal sticks and is allowed), guarded by test
// operations so that it fails rather than remove something else: every
// keyed list element on the way (the enclosing ones included) is tested by
// its merge key, any other last element by its value. The values of a
// Secret are never tested, so they never appear in the patch.
func removePatch(obj map[string]any, p Path, ptr string) (string, error) {
	guard := valueGuard(obj, p, ptr)
	if len(guard) == 1 {
		if size := composite(guard[0].Value); size > maxGuardedValue {
			return "", fmt.Errorf("building remove patch for %s: its value takes %d bytes, more than %d", p, size, maxGuardedValue)
		}
	}
	ops := append(keyGuards(obj, p), guard...)
	ops = append(ops, patchOp{Op: "remove", Path: ptr})
	if alias, ok := aliasOf(obj, p); ok {
		// Alone, the removal would not stick: the API server sets
		// serviceAccountName from the deprecated serviceAccount.
		aliasPtr, _ := JSONPointer(obj, alias)
		ops = append(ops, append(valueGuard(obj, alias, aliasPtr), patchOp{Op: "remove", Path: aliasPtr})...)
	}
	raw, err := json.Marshal(ops)
	if err != nil {
		return "", fmt.Errorf("building remove patch for %s: %w", p, err)
	}
	return string(raw), nil
}

// RemovedWith returns the pointers (RFC 6901) of the fields of obj that a
// removal of the field at p must remove too, or the API server puts it
// back from them: a pod spec's deprecated serviceAccount beside its
// serviceAccountName, when it has the same value (aliasOf). Nil for any
// other field. The orphan's RemovePatch and its RemovedWith (a rule's
// remedy) remove them, and a removal proof must too.
func RemovedWith(obj map[string]any, p Path) []string {
	alias, ok := aliasOf(obj, p)
	if !ok {
		return nil
	}
	ptr, _ := JSONPointer(obj, alias)
	return []string{ptr}
}

// aliasOf returns the deprecated serviceAccount beside p when p is the
// serviceAccountName of a built-in kind's pod spec and obj has both, of
// one value: the copy that the API server writes into the alias on every
// read. The alias is the API server's own only there (custom resources
// with such fields keep them apart).
func aliasOf(obj map[string]any, p Path) (Path, bool) {
	alias, value, ok := aliasBeside(obj, p)
	if !ok {
		return nil, false
	}
	name, _ := lookup(obj, p)
	if !jsonEqual(name, value) {
		return nil, false
	}
	return alias, true
}

// aliasDiffers reports whether p is the serviceAccountName of a built-in
// kind's pod spec whose deprecated alias obj has with another value. The
// alias is then no copy of the name (the server overwrites it with the
// name on every write, so only a write that sets it itself has one): a
// removal of the name alone makes the server take the alias's service
// account instead (the v1 conversion of PodSpec fills an empty
// serviceAccountName from serviceAccount), and one that removed the alias
// too would remove what someone set. Such a field gets no remedy.
func aliasDiffers(obj map[string]any, p Path) bool {
	_, value, ok := aliasBeside(obj, p)
	if !ok {
		return false
	}
	name, _ := lookup(obj, p)
	return !jsonEqual(name, value)
}

// aliasBeside returns the deprecated serviceAccount beside p and its
// value when p is the serviceAccountName of a built-in kind's pod spec
// and obj has the alias.
func aliasBeside(obj map[string]any, p Path) (Path, any, bool) {
	if !isPodSpecField(obj, p, serviceAccountName) {
		return nil, nil, false
	}
	alias := serviceAccountAlias(p)
	value, ok := lookup(obj, alias)
	if !ok {
		return nil, nil, false
	}
	return alias, value, true
}

// keyGuards tests the merge keys of every keyed list element of p, outermost
// first.
func keyGuards(obj map[string]any, p Path) []patchOp {
	var ops []patchOp
	for i, pe := range p {
		if pe.Key == nil {
			continue
		}
		ptr, _ := JSONPointer(obj, p[:i+1]) // a prefix of a path that exists
		for _, f := range *pe.Key {
			ops = append(ops, patchOp{Op: "test", Path: ptr + "/" + escapePointer(f.Name), Value: f.Value.Unstructured()})
		}
	}
	return ops
}

// valueGuard tests the value of the field itself when its last element is
// not a keyed list element (already tested by keyGuards) and the object is
// not a Secret.
func valueGuard(obj map[string]any, p Path, ptr string) []patchOp {
	if p[len(p)-1].Key != nil || obj["kind"] == "Secret" {
		return nil
	}
	value, _ := lookup(obj, p)
	if value == nil {
		return nil
	}
	return []patchOp{{Op: "test", Path: ptr, Value: value}}
}

// composite returns the length of v's JSON when v is a map or a list, else
// 0.
func composite(v any) int {
	switch v.(type) {
	case map[string]any, []any:
		raw, err := json.Marshal(v)
		if err != nil {
			return 0
		}
		return len(raw)
	}
	return 0
}

func escapePointer(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }

// AnnotationPointer is the RFC 6901 pointer to the annotation key of an
// object, for the JSON patches that write it.
func AnnotationPointer(key string) string { return "/metadata/annotations/" + escapePointer(key) }
