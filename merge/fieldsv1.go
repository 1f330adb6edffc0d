package merge

import (
	"bytes"
	"encoding/json"
	"errors"
	"iter"
	"maps"
	"slices"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// errNotDecodable marks a fieldsV1 that fieldsFromMap leaves to
// fieldpath's own decoder (which then reports its error as before).
var errNotDecodable = errors.New("fieldsV1 not decodable from its map")

// fieldSetOf is the field set of a decoded fieldsV1: what fieldpath.Set's
// FromJSON reads from its JSON, built from the map without encoding it
// again; and its nodes, the paths whose entry holds "." (nil when none).
// A value fieldsFromMap does not read as FromJSON would (not an object or
// null, a key that is no path element) goes through the JSON, so that
// the error is FromJSON's.
func fieldSetOf(fieldsV1 map[string]any) (fields, nodeSet *fieldpath.Set, err error) {
	if fields, nodeSet, err := fieldsFromMap(fieldsV1); err == nil {
		if fields == nil {
			fields = &fieldpath.Set{}
		}
		return fields, nodeSet, nil
	}
	raw, err := json.Marshal(fieldsV1)
	if err != nil {
		return nil, nil, err
	}
	fields = &fieldpath.Set{}
	if err := fields.FromJSON(bytes.NewReader(raw)); err != nil {
		return nil, nil, err
	}
	return fields, nodes(fieldsV1, nil, nil), nil
}

// fieldsFromMap follows fieldpath's readIterV1 on a decoded object: it
// returns the children of the node (nil when there are none), the nodes
// among them (the paths whose entry holds ".", nil when none), or
// errNotDecodable. Keys are read in encoding/json's order (sorted), the
// order FromJSON saw them in: of two keys naming one path element, the
// later one's children win, as there; the nodes of both are kept, as
// nodes does.
func fieldsFromMap(m map[string]any) (children, nodeSet *fieldpath.Set, err error) {
	children, nodeSet, err = fieldsInOrder(m, maps.Keys(m))
	if errors.Is(err, errDuplicate) {
		return fieldsInOrder(m, slices.Values(slices.Sorted(maps.Keys(m))))
	}
	return children, nodeSet, err
}

// errDuplicate is two keys of one object naming one path element: then
// their order matters (fieldsFromMap).
var errDuplicate = errors.New("two keys name one path element")

// fieldsInOrder is fieldsFromMap reading m's keys in the order of keys;
// it returns errDuplicate when two keys name one path element unless keys
// are sorted.
func fieldsInOrder(m map[string]any, keys iter.Seq[string]) (children, nodeSet *fieldpath.Set, err error) {
	sorted, prev := true, ""
	for key := range keys {
		sorted, prev = sorted && key >= prev, key
		if key == "." {
			continue
		}
		pe, err := fieldpath.DeserializePathElement(key)
		if errors.Is(err, fieldpath.ErrUnknownPathElementType) {
			continue
		}
		if err != nil {
			return nil, nil, errNotDecodable
		}
		var grandchildren, subNodes *fieldpath.Set
		v, isMap := m[key].(map[string]any)
		switch {
		case isMap:
			if grandchildren, subNodes, err = fieldsFromMap(v); err != nil {
				return nil, nil, err
			}
		case m[key] != nil:
			return nil, nil, errNotDecodable
		}
		if children == nil {
			children = &fieldpath.Set{Members: fieldpath.MakePathElementSet(len(m))}
		} else if _, seen := children.Children.Get(pe); !sorted && (seen || children.Members.Has(pe)) {
			return nil, nil, errDuplicate
		}
		// FromJSON: a child with no children of its own is a member;
		// one with "." is a member too (and a node).
		_, dot := v["."]
		if grandchildren == nil || dot {
			children.Members.Insert(pe)
		}
		if grandchildren != nil {
			*children.Children.Descend(pe) = *grandchildren
		}
		if dot || subNodes != nil {
			nodeSet = addNodes(nodeSet, pe, dot, subNodes)
		}
	}
	return children, nodeSet, nil
}

// addNodes adds pe (when dot) and subNodes under pe to set, allocated on
// first use.
func addNodes(set *fieldpath.Set, pe fieldpath.PathElement, dot bool, subNodes *fieldpath.Set) *fieldpath.Set {
	if set == nil {
		set = &fieldpath.Set{}
	}
	if dot {
		set.Members.Insert(pe)
	}
	if subNodes != nil {
		if under := set.Children.Descend(pe); under.Empty() {
			*under = *subNodes
		} else {
			*under = *under.Union(subNodes)
		}
	}
	return set
}
