package merge

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Compare only what changed: the analyses skip or shrink the work whose
// result is provably unaffected by the parts of the objects they leave
// out. Each shortcut states its argument where it is taken; the
// differential tests (prune_test.go) hold every analysis equal to the
// unpruned one (an Analyzer built with the test-only withoutPruning), and
// WithShadowVerify runs both on every call.

// keepTree is the part of an object that a set of paths reaches through
// map keys: a node either keeps its whole value (whole) or only the keys
// it lists. A path is followed as long as it names struct fields or map
// keys; from its first list element (or its end) on, the value is kept
// whole.
type keepTree struct {
	whole bool
	keys  map[string]*keepTree
}

// identity are the fields that kubectl's patch checks or reads besides the
// facts' own: apiVersion and kind (the patch type and the Go type) and
// metadata.name (the JSON merge patch's precondition, last-applied's
// sameObject check).
var identity = []Path{
	{fieldName("apiVersion")},
	{fieldName("kind")},
	{fieldName("metadata"), fieldName("name")},
}

func keepTreeOf(paths []Path) *keepTree {
	t := &keepTree{}
	for _, p := range identity {
		t.add(p)
	}
	for _, p := range paths {
		t.add(p)
	}
	return t
}

func (t *keepTree) add(p Path) {
	n := t
	for _, pe := range p {
		if n.whole {
			return
		}
		if pe.FieldName == nil {
			break
		}
		if n.keys == nil {
			n.keys = map[string]*keepTree{}
		}
		child, ok := n.keys[*pe.FieldName]
		if !ok {
			child = &keepTree{}
			n.keys[*pe.FieldName] = child
		}
		n = child
	}
	n.whole, n.keys = true, nil
}

// prune returns v restricted to t: maps keep the keys that t lists, and the
// keys of strategic merge patch directives ($patch, $retainKeys, …) so
// that a directive written in a manifest keeps its effect on the kept
// keys. Values are shared with v, never copied or changed.
func (t *keepTree) prune(v any) any {
	m, ok := v.(map[string]any)
	if t.whole || !ok {
		return v
	}
	out := make(map[string]any, len(t.keys))
	for k, x := range m {
		if c, ok := t.keys[k]; ok {
			out[k] = c.prune(x)
		} else if strings.HasPrefix(k, "$") {
			out[k] = x
		}
	}
	return out
}

func (t *keepTree) pruneObject(obj *unstructured.Unstructured) *unstructured.Unstructured {
	m, _ := t.prune(obj.Object).(map[string]any)
	return &unstructured.Unstructured{Object: m}
}

// ownedUnchanged reports whether no field that la (last-applied, as
// compared) has differs between old and new: then no field that
// last-applied owns changed, and a write from old to new has no imperative
// change, whatever the schema.
//
// The argument: every path of la's field set starts with a top-level key
// of la and runs through la's nested maps. Where old and new hold the very
// same value (equalValues: same types, same contents), a comparison of
// their typed values (typed or deduced schema, validated or not) reports
// nothing modified or removed below it. The walk descends only into maps
// that every schema treats field by field — the object itself, metadata,
// and metadata's labels and annotations — and compares anything else
// whole, because a map elsewhere may be atomic (a LabelSelector): its
// change is then a change of the map as a leaf, which la owns even when
// the keys that changed are not la's.
func ownedUnchanged(la, old, new map[string]any) bool {
	return sameKeys(la, old, new, func(k string, lv, ov, nv any) bool {
		if k != "metadata" {
			return false
		}
		lm, ok1 := lv.(map[string]any)
		om, ok2 := ov.(map[string]any)
		nm, ok3 := nv.(map[string]any)
		return ok1 && ok2 && ok3 && sameKeys(lm, om, nm, func(k string, lv, ov, nv any) bool {
			if k != "labels" && k != "annotations" {
				return false
			}
			lm, ok1 := lv.(map[string]any)
			om, ok2 := ov.(map[string]any)
			nm, ok3 := nv.(map[string]any)
			return ok1 && ok2 && ok3 && sameKeys(lm, om, nm, nil)
		})
	})
}

// sameKeys reports whether old and new have the same value (or both lack
// it) at every key of la. For a key where descend is true (it checked the
// children itself), the values are not compared.
func sameKeys(la, old, new map[string]any, descend func(k string, lv, ov, nv any) bool) bool {
	for k, lv := range la {
		ov, inOld := old[k]
		nv, inNew := new[k]
		if descend != nil && inOld && inNew && descend(k, lv, ov, nv) {
			continue
		}
		if inOld != inNew || !equalValues(ov, nv) {
			return false
		}
	}
	return true
}

// equalValues reports whether a and b, decoded JSON, are the same value of
// the same types (an int64 never equals a float64, unlike jsonEqual), without
// allocating.
func equalValues(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equalValues(xv, yv) {
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
			if !equalValues(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return false // any other type: not decoded JSON, never taken as equal
}
