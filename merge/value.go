package merge

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// lookup returns the value at p in obj (decoded JSON) and whether it exists.
func lookup(obj any, p Path) (any, bool) {
	cur := obj
	for _, pe := range p {
		var ok bool
		cur, _, ok = step(cur, pe)
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

// step descends one path element and returns the child and, for list
// elements, its index.
func step(cur any, pe fieldpath.PathElement) (any, int, bool) {
	switch {
	case pe.FieldName != nil:
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, -1, false
		}
		v, ok := m[*pe.FieldName]
		return v, -1, ok
	case pe.Index != nil:
		l, ok := cur.([]any)
		if !ok || *pe.Index < 0 || *pe.Index >= len(l) {
			return nil, -1, false
		}
		return l[*pe.Index], *pe.Index, true
	case pe.Value != nil:
		l, _ := cur.([]any)
		want := (*pe.Value).Unstructured()
		for i, item := range l {
			if jsonEqual(item, want) {
				return item, i, true
			}
		}
	case pe.Key != nil:
		l, _ := cur.([]any)
		if i := findKeyed(l, *pe.Key); i >= 0 {
			return l[i], i, true
		}
	}
	return nil, -1, false
}

// findKeyed finds the element of l matching every key field. A key field
// that an element leaves out matches too when no element matches exactly:
// the schema defaults it (ports[containerPort=80,protocol=TCP] finds a
// manifest port without protocol).
func findKeyed(l []any, key value.FieldList) int {
	// The key values are decoded once: a lookup in a long list (10,000 env
	// entries) compares them with every element.
	want := make([]any, len(key))
	for i, f := range key {
		want[i] = f.Value.Unstructured()
	}
	for _, lenient := range []bool{false, true} {
		for i, item := range l {
			m, ok := item.(map[string]any)
			if ok && keyMatches(m, key, want, lenient) {
				return i
			}
		}
	}
	return -1
}

func keyMatches(m map[string]any, key value.FieldList, want []any, lenient bool) bool {
	for i, f := range key {
		v, ok := m[f.Name]
		if !ok && lenient {
			continue
		}
		if !ok || !scalarEqual(v, want[i]) {
			return false
		}
	}
	return true
}

// scalarEqual compares key values, which are scalars, without jsonEqual's
// allocations; anything else falls back to jsonEqual.
func scalarEqual(a, b any) bool {
	switch x := a.(type) {
	case string:
		return sameAs(x, b)
	case bool:
		return sameAs(x, b)
	}
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	return jsonEqual(a, b)
}

func number(v any) (float64, bool) {
	switch t := v.(type) {
	case int64:
		return float64(t), true
	case int:
		return float64(t), true
	case int32:
		return float64(t), true
	case float64:
		return t, true
	}
	return 0, false
}

// jsonEqual compares two decoded JSON values, treating numbers by value
// (int64 1 equals float64 1), a nil map or list as an empty one, and
// anything else as reflect.DeepEqual does: the same as comparing with
// reflect.DeepEqual copies whose numbers are all float64, without copying
// the values (TestJSONEqualMatchesNormalize).
func jsonEqual(a, b any) bool { return equalJSON("", "", a, b, sameByValue) }

// equalJSON walks two decoded JSON values together, maps by key and lists
// by index, without allocating, and compares the leaves with leaf, which
// gets the names of the leaf's field and of its parent ("" for a list
// element, which has no field name). parent and name are a and b's own. A
// map or a list never equals a leaf.
func equalJSON(parent, name string, a, b any, leaf func(parent, name string, a, b any) bool) bool {
	return walkJSON(parent, name, a, b, false, leaf)
}

// walkJSON is equalJSON; within lets b's maps have more keys than a's
// (FieldsWithin).
func walkJSON(parent, name string, a, b any, within bool, leaf func(parent, name string, a, b any) bool) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || !within && len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !walkJSON(name, k, xv, yv, within, leaf) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !walkJSON("", "", x[i], y[i], within, leaf) {
				return false
			}
		}
		return true
	}
	switch b.(type) {
	case map[string]any, []any:
		return false
	}
	return leaf(parent, name, a, b)
}

// sameByValue compares two leaves, numbers by value, whatever their field.
func sameByValue(_, _ string, a, b any) bool {
	fa, aNum := normalNumber(a)
	fb, bNum := normalNumber(b)
	if aNum || bNum {
		return aNum && bNum && fa == fb
	}
	return reflect.DeepEqual(a, b)
}

// normalNumber is the float64 a number compares as (json.Number too).
func normalNumber(v any) (float64, bool) {
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		return f, true
	}
	return number(v)
}

// valueAt returns the value at p, or absent.
type presence struct {
	v  any
	ok bool
}

func at(obj map[string]any, p Path) presence {
	if obj == nil {
		return presence{}
	}
	v, ok := lookup(obj, p)
	return presence{v: v, ok: ok}
}

// same reports whether two looked-up values are equal; an explicit null
// equals an absent field.
func same(a, b presence) bool {
	if (!a.ok || a.v == nil) && (!b.ok || b.v == nil) {
		return true
	}
	return a.ok && b.ok && jsonEqual(a.v, b.v)
}

// JSONPointer returns the RFC 6901 pointer to p in obj, with list elements
// resolved to their index in obj, and whether p exists in obj. Use it to
// build `kubectl patch --type=json` commands.
func JSONPointer(obj map[string]any, p Path) (string, bool) {
	var b strings.Builder
	var cur any = obj
	for _, pe := range p {
		next, idx, ok := step(cur, pe)
		if !ok {
			return "", false
		}
		b.WriteByte('/')
		if idx >= 0 {
			b.WriteString(strconv.Itoa(idx))
		} else {
			b.WriteString(escapePointer(*pe.FieldName))
		}
		cur = next
	}
	return b.String(), true
}

// maxString is the default length at which string values in facts are cut.
const maxString = 256

// truncate returns a copy of v with long strings cut to n bytes plus "…".
func truncate(v any, n int) any {
	return copyJSON(v, func(x any) any {
		if s, ok := x.(string); ok && n > 0 && len(s) > n {
			return strings.ToValidUTF8(s[:n], "") + "…"
		}
		return x
	}, nil)
}

// sameAt is same, except that resource quantities compare by amount: a
// manifest's cpu: 0.5 is stored as "500m", memory: 1024 as "1Ki"… and an
// integer 1 as "1". Quantities inside a value compare so too: an HPA's
// metrics, an atomic list, hold targets stored as "30" for a manifest's
// averageValue: 30.
func sameAt(p Path, a, b presence) bool {
	if same(a, b) {
		return true
	}
	if !a.ok || !b.ok {
		return false
	}
	parent, name := lastNames(p)
	return sameAmounts(parent, name, a.v, b.v)
}

// sameAmounts is jsonEqual, except that the leaves of quantity fields
// (isQuantityField, by the names of the field and of its parent) compare
// by amount.
func sameAmounts(parent, name string, a, b any) bool {
	return equalJSON(parent, name, a, b, sameAmount)
}

// sameAmount compares two leaves as sameByValue does, and those of a
// quantity field by amount.
func sameAmount(parent, name string, a, b any) bool {
	if sameByValue(parent, name, a, b) {
		return true
	}
	if !isQuantityField(parent, name) {
		return false
	}
	qa, okA := quantity(a)
	qb, okB := quantity(b)
	return okA && okB && qa.Cmp(qb) == 0
}

// lastNames returns the field names of p's last element and of the one
// before it, "" where an element is a list element.
func lastNames(p Path) (parent, name string) {
	if len(p) > 0 && p[len(p)-1].FieldName != nil {
		name = *p[len(p)-1].FieldName
	}
	if len(p) > 1 && p[len(p)-2].FieldName != nil {
		parent = *p[len(p)-2].FieldName
	}
	return parent, name
}

// isQuantityField reports whether a field name inside a field parent
// holds a resource quantity in a built-in kind: an entry of a map of
// quantities (requests.cpu, a LimitRange's maxLimitRequestRatio.cpu, a
// RuntimeClass's podFixed.memory), or a quantity field (emptyDir's
// sizeLimit, resourceFieldRef's divisor, an HPA target's averageValue and
// value, an HPA behavior's tolerance, a CSIStorageCapacity's capacity and
// maximumVolumeSize). The fields were listed from the k8s.io/api types.
func isQuantityField(parent, name string) bool {
	switch name {
	case "":
		return false
	case "sizeLimit", "divisor", "maximumVolumeSize":
		return true
	case "averageValue", "value":
		if parent == "target" {
			return true
		}
	case "tolerance":
		if parent == "scaleUp" || parent == "scaleDown" {
			return true
		}
	case "capacity":
		if parent == "" {
			return true
		}
	}
	switch parent {
	case "requests", "limits", "capacity", "allocatable", "overhead", "hard", "min", "max", "default", "defaultRequest",
		"maxLimitRequestRatio", "podFixed":
		return true
	}
	return false
}

func quantity(v any) (resource.Quantity, bool) {
	var s string
	switch t := v.(type) {
	case string:
		s = t
	case float64:
		s = strconv.FormatFloat(t, 'f', -1, 64)
	case int64:
		s = strconv.FormatInt(t, 10)
	default:
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(s)
	return q, err == nil
}

// isEmpty reports whether v holds no setting: null, {} or [] (the server
// writes resources: {}, securityContext: {}, creationTimestamp: null).
func isEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}
