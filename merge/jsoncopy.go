package merge

// CopyWithout returns a deep copy of v, a value that encoding/json or
// sigs.k8s.io/json decoded, without the map entries, at any depth, whose
// value drop reports once copied (so an entry whose map drop empties can
// go too). Maps and lists are rebuilt, a nil one as an empty one; any
// other value is kept as it is.
func CopyWithout(v any, drop func(any) bool) any { return copyJSON(v, nil, drop) }

// copyJSON returns a deep copy of the decoded JSON value v: maps and
// lists rebuilt (a nil one as an empty one), every other value replaced by
// leaf(value) (kept when leaf is nil), and the map entries whose copied
// value drop reports left out (none when drop is nil).
func copyJSON(v any, leaf func(any) any, drop func(any) bool) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			if x = copyJSON(x, leaf, drop); drop == nil || !drop(x) {
				out[k] = x
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = copyJSON(x, leaf, drop)
		}
		return out
	}
	if leaf == nil {
		return v
	}
	return leaf(v)
}
