package policy

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Operations of a remedy's JSON patch (RFC 6902).
const (
	// OpAdd adds a value, or replaces the one a map key has.
	OpAdd = "add"
	// OpRemove removes the value at the path.
	OpRemove = "remove"
	// OpReplace replaces the value at the path, which must exist.
	OpReplace = "replace"
	// OpTest fails the whole patch unless the path has the value.
	OpTest = "test"
)

// PatchOperation is one operation of a remedy's JSON patch (RFC 6902).
type PatchOperation struct {
	// Op is OpAdd, OpRemove, OpReplace or OpTest.
	Op string `json:"op"`
	// Path is the RFC 6901 pointer to the field, e.g.
	// "/spec/template/spec/containers/0/env/1".
	Path string `json:"path"`
	// Value is the value that add, replace and test take, never null;
	// nil for remove.
	Value any `json:"value,omitempty"`
}

// Patch is a decision's remedy: the JSON patch (RFC 6902) that carries it
// out on the object, built by the rule from merge's facts in its input (an
// orphan's pointer, the repaired last-applied, the stored replicas). Nil
// when the decision has none; empty when there is nothing left to change
// (the field is already gone).
type Patch []PatchOperation

// writes reports whether a decision with action a changes the object in
// the mutating pass.
func writes(a Action) bool { return a == ActionRepair || a == ActionPrune }

// Remedy returns the JSON patch that carries out the decisions among ds
// whose action writes (repair, prune): their patches combined (Combine).
// A decision that writes without a patch is an error: nothing says what
// it changes.
func Remedy(ds []Decision) (Patch, error) {
	var patches []Patch
	for _, d := range ds {
		if !writes(d.Action) {
			continue
		}
		if d.Patch == nil {
			return nil, fmt.Errorf("rule %s asked for %s, which apply-hygiene cannot carry out for it: its decision has no patch", d.Rule, d.Action)
		}
		patches = append(patches, d.Patch)
	}
	return Combine(patches...), nil
}

// Combine makes one JSON patch of the patches of several decisions on one
// object, each built against the object as it is: every test operation
// first, then the adds and replaces in order, then the removals from the
// end of the object backwards, so that removing a list element shifts
// none that is still to go, and a field goes after the fields inside it.
// A removal that two patches share is made once. Combine does not check
// that the patches are independent; ApplyRemedy does, on the object.
func Combine(patches ...Patch) Patch {
	var tests, sets, removes Patch
	for _, p := range patches {
		for _, op := range p {
			switch {
			case op.Op == OpTest:
				tests = append(tests, op)
			case op.Op != OpRemove:
				sets = append(sets, op)
			case !slices.ContainsFunc(removes, func(r PatchOperation) bool { return r.Path == op.Path }):
				removes = append(removes, PatchOperation{Op: OpRemove, Path: op.Path})
			}
		}
	}
	slices.SortStableFunc(removes, func(a, b PatchOperation) int { return ComparePointers(b.Path, a.Path) })
	return slices.Concat(tests, sets, removes)
}

// ApplyRemedy carries out the repair and prune decisions among ds on obj
// (Remedy) and returns the object they leave; obj is not changed. The
// decisions' patches must be independent: a write of one decision that
// touches a field another's touches, encloses or is inside of, or an
// element of a list whose elements another addresses, is an error naming
// both rules and paths (removals by several decisions excepted, which
// Combine orders). With ApplyRemedyJSON, it is the one place that changes
// an object for a decision: the mutating pass and the audit's fix write
// what it computes.
func ApplyRemedy(obj map[string]any, ds []Decision) (map[string]any, error) {
	patched, err := ApplyRemedyJSON(obj, ds)
	if err != nil {
		return nil, err
	}
	return decodeObject(patched)
}

// ApplyRemedyJSON is ApplyRemedy for a caller that sends the object on
// encoded (the mutating pass): it returns the JSON the patch leaves,
// without decoding it.
func ApplyRemedyJSON(obj map[string]any, ds []Decision) ([]byte, error) {
	patch, err := Remedy(ds)
	if err != nil {
		return nil, err
	}
	if err := independent(obj, ds); err != nil {
		return nil, err
	}
	return patch.applyEncoded(obj)
}

// Apply applies p to a copy of obj and returns it; obj is not changed.
// Numbers come back as int64 or float64, as in an unstructured object.
func (p Patch) Apply(obj map[string]any) (map[string]any, error) {
	patched, err := p.applyEncoded(obj)
	if err != nil {
		return nil, err
	}
	return decodeObject(patched)
}

// applyEncoded encodes obj and applies p to it; it returns the JSON the
// patch leaves.
func (p Patch) applyEncoded(obj map[string]any) ([]byte, error) {
	doc, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding the object: %w", err)
	}
	return p.ApplyJSON(doc)
}

// ApplyJSON applies p to doc, a JSON object, and returns the JSON it
// leaves.
func (p Patch) ApplyJSON(doc []byte) ([]byte, error) {
	ops, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encoding the patch: %w", err)
	}
	decoded, err := jsonpatch.DecodePatch(ops)
	if err != nil {
		return nil, fmt.Errorf("decoding the patch: %w", err)
	}
	patched, err := decoded.Apply(doc)
	if err != nil {
		return nil, fmt.Errorf("applying the patch: %w", err)
	}
	return patched, nil
}

// decodeObject decodes a patched object as unstructured content.
func decodeObject(patched []byte) (map[string]any, error) {
	out := map[string]any{}
	if err := utiljson.Unmarshal(patched, &out); err != nil {
		return nil, fmt.Errorf("decoding the patched object: %w", err)
	}
	return out, nil
}

// ComparePointers orders JSON pointers token by token, list indices by
// number, a pointer after its prefixes.
func ComparePointers(a, b string) int {
	x, y := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(x) && i < len(y); i++ {
		if x[i] == y[i] {
			continue
		}
		m, errM := strconv.Atoi(x[i])
		n, errN := strconv.Atoi(y[i])
		if errM == nil && errN == nil {
			return cmp.Compare(m, n)
		}
		return cmp.Compare(x[i], y[i])
	}
	return cmp.Compare(len(x), len(y))
}

// decodePatch converts the patch field of a decision; nil when it has
// none.
func decodePatch(v any, present bool) (Patch, error) {
	if !present {
		return nil, nil
	}
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("patch is a %T, not an array", v)
	}
	out := Patch{}
	for i, item := range items {
		op, err := decodeOperation(item)
		if err != nil {
			return nil, fmt.Errorf("patch operation %d: %w", i, err)
		}
		out = append(out, op)
	}
	return out, nil
}

func decodeOperation(item any) (PatchOperation, error) {
	m, ok := item.(map[string]any)
	if !ok {
		return PatchOperation{}, fmt.Errorf("%v is not an object", item)
	}
	op, _ := m["op"].(string)
	if !slices.Contains([]string{OpAdd, OpRemove, OpReplace, OpTest}, op) {
		return PatchOperation{}, fmt.Errorf("op %v is not one of add, remove, replace, test", m["op"])
	}
	path, ok := m["path"].(string)
	if !ok {
		return PatchOperation{}, fmt.Errorf("%s has no path", op)
	}
	if err := validPointer(path); err != nil {
		return PatchOperation{}, fmt.Errorf("%s path %q: %w", op, path, err)
	}
	if op != OpTest {
		if err := writable(path); err != nil {
			return PatchOperation{}, fmt.Errorf("%s path %q: %w", op, path, err)
		}
	}
	value, hasValue := m["value"]
	if op != OpRemove && (!hasValue || value == nil) {
		return PatchOperation{}, fmt.Errorf("%s of %s has no value", op, path)
	}
	if op == OpRemove {
		value = nil
	}
	return PatchOperation{Op: op, Path: path, Value: value}, nil
}

// validPointer checks that p is an RFC 6901 pointer to a field: "/"
// followed by tokens, "~" only as "~0" or "~1". The whole document ("")
// is refused: a remedy changes fields, never the object as a whole.
func validPointer(p string) error {
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("a JSON pointer starts with /")
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 == len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return fmt.Errorf("~ at %d is neither ~0 nor ~1", i)
		}
	}
	return nil
}
