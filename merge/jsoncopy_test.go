package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCopyWithout(t *testing.T) {
	isNull := func(v any) bool { return v == nil }
	isEmptyMap := func(v any) bool { m, ok := v.(map[string]any); return ok && len(m) == 0 }
	tests := map[string]struct {
		v    any
		drop func(any) bool
		want any
	}{
		"null entries go at any depth, null list elements stay": {
			v: map[string]any{"a": nil, "b": map[string]any{"c": nil, "d": int64(1)},
				"e": []any{nil, map[string]any{"f": nil}}},
			drop: isNull,
			want: map[string]any{"b": map[string]any{"d": int64(1)}, "e": []any{nil, map[string]any{}}},
		},
		"a map that dropping empties goes with its entry": {
			v:    map[string]any{"a": map[string]any{"b": map[string]any{}}, "c": "x", "d": []any{map[string]any{}}},
			drop: isEmptyMap,
			want: map[string]any{"c": "x", "d": []any{map[string]any{}}},
		},
		"nil maps and lists come back empty": {
			v:    map[string]any{"a": map[string]any(nil), "b": []any(nil)},
			drop: isNull,
			want: map[string]any{"a": map[string]any{}, "b": []any{}},
		},
		"a leaf is kept as it is": {
			v:    "x",
			drop: isNull,
			want: "x",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := CopyWithout(tt.v, tt.drop)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CopyWithout (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCopyWithoutLeavesTheInputAlone(t *testing.T) {
	in := map[string]any{"a": nil, "b": []any{map[string]any{"c": nil}}}
	_ = CopyWithout(in, func(v any) bool { return v == nil })
	want := map[string]any{"a": nil, "b": []any{map[string]any{"c": nil}}}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("input changed (-want +got):\n%s", diff)
	}
}

func TestCopyJSONLeaf(t *testing.T) {
	in := map[string]any{"a": "x", "b": []any{"y", int64(1), nil}, "c": map[string]any{"d": true}}
	var seen []any
	got := copyJSON(in, func(v any) any {
		seen = append(seen, v)
		if s, ok := v.(string); ok {
			return s + s
		}
		return v
	}, nil)
	want := map[string]any{"a": "xx", "b": []any{"yy", int64(1), nil}, "c": map[string]any{"d": true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("copyJSON (-want +got):\n%s", diff)
	}
	if len(seen) != 5 {
		t.Errorf("leaf saw %d values, want the 5 leaves: %v", len(seen), seen)
	}
}
