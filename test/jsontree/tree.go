package jsontree

import (
	"fmt"
	"sort"
	"strings"
)

// Paths returns the path of every node below doc, parents before their
// children, map keys in sorted order.
func Paths(doc any) [][]any {
	var out [][]any
	var walk func(v any, path []any)
	walk = func(v any, path []any) {
		if len(path) > 0 {
			out = append(out, path)
		}
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(v[k], append(append([]any{}, path...), k))
			}
		case []any:
			for i, e := range v {
				walk(e, append(append([]any{}, path...), i))
			}
		}
	}
	walk(doc, nil)
	return out
}

// Set replaces the node at path with v. It does nothing when path is
// empty or does not lead to a node's container.
func Set(doc any, path []any, v any) {
	switch parent, last := parentOf(doc, path); p := parent.(type) {
	case map[string]any:
		if k, ok := last.(string); ok {
			p[k] = v
		}
	case []any:
		if i, ok := last.(int); ok && i >= 0 && i < len(p) {
			p[i] = v
		}
	}
}

// Delete removes the node at path from its map; a list keeps its length,
// and the element becomes null.
func Delete(doc any, path []any) {
	switch parent, last := parentOf(doc, path); p := parent.(type) {
	case map[string]any:
		if k, ok := last.(string); ok {
			delete(p, k)
		}
	case []any:
		Set(doc, path, nil)
	}
}

// String writes path with dots: request.object.spec.0.
func String(path []any) string {
	parts := make([]string, len(path))
	for i, step := range path {
		parts[i] = fmt.Sprint(step)
	}
	return strings.Join(parts, ".")
}

// parentOf returns the container of the node at path and the last step;
// a nil container when there is none.
func parentOf(doc any, path []any) (any, any) {
	if len(path) == 0 {
		return nil, nil
	}
	cur := doc
	for _, step := range path[:len(path)-1] {
		switch c := cur.(type) {
		case map[string]any:
			k, _ := step.(string)
			cur = c[k]
		case []any:
			i, ok := step.(int)
			if !ok || i < 0 || i >= len(c) {
				return nil, nil
			}
			cur = c[i]
		default:
			return nil, nil
		}
	}
	return cur, path[len(path)-1]
}
