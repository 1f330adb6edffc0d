package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// setAt and removeAt write one restored field into last-applied and leave
// the rest as it is.
func TestSetAtAndRemoveAt(t *testing.T) {
	env := func(names ...string) map[string]any {
		var l []any
		for _, n := range names {
			l = append(l, map[string]any{"name": n, "value": n + "!"})
		}
		return map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "env": l}}}}
	}
	src := env("A", "B", "C")
	tests := map[string]struct {
		dst    map[string]any
		path   string
		whole  bool
		remove bool
		// key: setKeyAt, which writes the element's key alone.
		key  bool
		want map[string]any
	}{
		"an added list element goes where the source has it": {
			dst: env("A", "C"), path: "spec.containers[name=web].env[name=B]", want: env("A", "B", "C"),
		},
		"an added first element goes first": {
			dst: env("B", "C"), path: "spec.containers[name=web].env[name=A]", want: env("A", "B", "C"),
		},
		"a changed leaf takes the source's value": {
			dst:  map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "env": []any{map[string]any{"name": "B", "value": "old"}}}}}},
			path: "spec.containers[name=web].env[name=B].value",
			want: map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "env": []any{map[string]any{"name": "B", "value": "B!"}}}}}},
		},
		"a field under a list element the destination lacks is left alone": {
			dst: map[string]any{"spec": map[string]any{"containers": []any{}}}, path: "spec.containers[name=web].env[name=B]",
			want: map[string]any{"spec": map[string]any{"containers": []any{}}},
		},
		"a field under a list element the destination lacks copies the element from a manifest": {
			dst: map[string]any{"spec": map[string]any{"containers": []any{}}}, path: "spec.containers[name=web].env[name=B]", whole: true,
			want: env("A", "B", "C"),
		},
		"maps on the way are created": {
			dst: map[string]any{}, path: "spec.containers", want: env("A", "B", "C"),
		},
		"an added list element is written as its key alone": {
			dst: env("A", "C"), path: "spec.containers[name=web].env[name=B]", key: true,
			want: map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "env": []any{
				map[string]any{"name": "A", "value": "A!"}, map[string]any{"name": "B"}, map[string]any{"name": "C", "value": "C!"},
			}}}}},
		},
		"a field that is not a list element has no key to write": {
			dst: env("A"), path: "spec.containers[name=web].env[name=B].value", key: true, want: env("A"),
		},
		"a removed element leaves the others": {
			dst: env("A", "B", "C"), path: "spec.containers[name=web].env[name=B]", remove: true, want: env("A", "C"),
		},
		"removing what is not there changes nothing": {
			dst: env("A"), path: "spec.containers[name=web].env[name=B]", remove: true, want: env("A"),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := mustPath(t, tc.path)
			switch {
			case tc.remove:
				removeAt(tc.dst, p)
			case tc.key:
				setKeyAt(tc.dst, p, src)
			default:
				setAt(tc.dst, p, src, tc.whole)
			}
			if diff := cmp.Diff(tc.want, tc.dst); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}
