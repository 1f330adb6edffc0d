package merge

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Compare only what changed: the analyses skip or shrink the work whose
// result is provably unaffected by the parts of the objects they leave
// out. Each shortcut states its argument where it is taken; the
// differential tests (prune_test.go) hold every analysis equal to the
// unpruned one (an Analyzer built with the test-only withoutPruning), and
// WithShadowVerify runs both on every call.

// keepTree is the part of an object that a set of paths reaches: a node
// either keeps its whole value (whole), or, for a map, only the keys it
// lists, or, for a list that a strategic merge patch merges by a merge key
// (list), only the elements whose merge key has one of the values it
// lists. A path is followed through struct fields, map keys and such list
// elements; from any other element (or its end) on, the value is kept
// whole.
type keepTree struct {
	whole bool
	keys  map[string]*keepTree
	// mergeKey and elems, for a list: the elements by their merge key's
	// value (keyString).
	mergeKey string
	elems    map[string]*keepTree
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

// keepTreeOf returns the tree of paths. meta is the strategic merge patch
// metadata of the objects' kind, nil for a kind without a Go type (a JSON
// merge patch replaces lists whole: they are then kept whole).
func keepTreeOf(paths []Path, meta strategicpatch.LookupPatchMeta) *keepTree {
	t := &keepTree{}
	for _, p := range identity {
		t.add(p, nil)
	}
	for _, p := range paths {
		t.add(p, meta)
	}
	return t
}

func (t *keepTree) add(p Path, meta strategicpatch.LookupPatchMeta) {
	n := t
	for i := 0; i < len(p) && !n.whole; i++ {
		var child *keepTree
		if child, meta = n.child(p, i, meta); child == nil {
			break
		}
		n = child
	}
	n.whole, n.keys, n.elems = true, nil, nil
}

// child returns the node of p[i] below n (nil when p[i] is kept whole)
// and the patch metadata of its value.
func (n *keepTree) child(p Path, i int, meta strategicpatch.LookupPatchMeta) (*keepTree, strategicpatch.LookupPatchMeta) {
	pe := p[i]
	switch {
	case pe.FieldName != nil && n.elems == nil:
		next := lookupMeta(meta, p, i)
		if n.keys == nil {
			n.keys = map[string]*keepTree{}
		}
		c, ok := n.keys[*pe.FieldName]
		if !ok {
			c = &keepTree{}
			n.keys[*pe.FieldName] = c
		}
		return c, next
	case pe.Key != nil && n.keys == nil && meta != nil && n.mergeKeyOf(meta) != "":
		v, ok := keyValue(*pe.Key, n.mergeKey)
		if !ok {
			return nil, nil
		}
		if n.elems == nil {
			n.elems = map[string]*keepTree{}
		}
		c, ok := n.elems[v]
		if !ok {
			// An element keeps its merge key, which the patch matches
			// it by, and every field of its key in the field sets, by
			// which a fact's path finds it.
			c = &keepTree{keys: map[string]*keepTree{n.mergeKey: {whole: true}}}
			for _, f := range *pe.Key {
				c.keys[f.Name] = &keepTree{whole: true}
			}
			n.elems[v] = c
		}
		// The element's fields; a list directly in a list is kept whole.
		return c, meta.(listMeta).LookupPatchMeta
	}
	return nil, nil
}

// lookupMeta returns the patch metadata of the value of field p[i]: of
// its elements when it is a list (p[i+1] is an element), nil when there is
// none.
func lookupMeta(meta strategicpatch.LookupPatchMeta, p Path, i int) strategicpatch.LookupPatchMeta {
	if meta == nil {
		return nil
	}
	name := *p[i].FieldName
	if i+1 < len(p) && p[i+1].FieldName == nil {
		elem, pm, err := meta.LookupPatchMetadataForSlice(name)
		if err != nil || !slices.Contains(pm.GetPatchStrategies(), "merge") || pm.GetPatchMergeKey() == "" {
			return nil
		}
		return listMeta{LookupPatchMeta: elem, mergeKey: pm.GetPatchMergeKey()}
	}
	next, _, err := meta.LookupPatchMetadataForStruct(name)
	if err != nil {
		return nil
	}
	return next
}

// listMeta is the patch metadata of a list's elements, with the merge key
// of the list (patchStrategy merge).
type listMeta struct {
	strategicpatch.LookupPatchMeta
	mergeKey string
}

// mergeKeyOf sets and returns n's merge key from the metadata of its
// elements; "" when the list is not merged by a key.
func (n *keepTree) mergeKeyOf(meta strategicpatch.LookupPatchMeta) string {
	lm, ok := meta.(listMeta)
	if !ok || (n.mergeKey != "" && n.mergeKey != lm.mergeKey) {
		return ""
	}
	n.mergeKey = lm.mergeKey
	return n.mergeKey
}

// keyValue returns the encoded value of field name in a list element's
// key (the field sets' key, which holds the merge key, and maybe more).
func keyValue(key value.FieldList, name string) (string, bool) {
	for _, f := range key {
		if f.Name == name {
			return keyString([]any{f.Value.Unstructured()})
		}
	}
	return "", false
}

// prune returns v restricted to t: maps keep the keys that t lists, and the
// keys of strategic merge patch directives ($patch, $retainKeys, …) so
// that a directive written in a manifest keeps its effect on the kept
// keys; lists merged by a key keep the elements whose merge key t lists,
// and every element that is not an object with a scalar merge key (on
// which kubectl's patch fails, whole or pruned). Values are shared with v,
// never copied or changed.
func (t *keepTree) prune(v any) any {
	if t.whole {
		return v
	}
	if l, ok := v.([]any); ok && t.elems != nil {
		out := make([]any, 0, len(t.elems))
		for _, x := range l {
			m, ok := x.(map[string]any)
			if !ok {
				out = append(out, x)
				continue
			}
			k, ok := keyString([]any{m[t.mergeKey]})
			if _, has := m[t.mergeKey]; !has || !ok {
				out = append(out, x)
			} else if c, kept := t.elems[k]; kept {
				out = append(out, c.prune(x))
			}
		}
		return out
	}
	m, ok := v.(map[string]any)
	if !ok || t.keys == nil {
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
func equalValues(a, b any) bool { return equalJSON("", "", a, b, sameTyped) }

// sameTyped compares two leaves of decoded JSON by type and value,
// whatever their field.
func sameTyped(_, _ string, a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		return sameAs(x, b)
	case bool:
		return sameAs(x, b)
	case int64:
		return sameAs(x, b)
	case float64:
		return sameAs(x, b)
	}
	return false // any other type: not decoded JSON, never taken as equal
}

// sameAs reports whether b is a T equal to x.
func sameAs[T comparable](x T, b any) bool {
	y, ok := b.(T)
	return ok && x == y
}
