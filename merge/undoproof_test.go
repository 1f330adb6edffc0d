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

// A repair writes a restored value into last-applied only where it adds no
// key to last-applied's value: kubectl's next apply deletes the keys of
// last-applied that the manifest lacks, inside atomic maps too (an
// adversarial review of soak seed 271126, sequence 044: a person's
// nodeSelector entry, a matchExpressions a patch added to a topology
// spread constraint's labelSelector, restored by an undo to a revision
// the webhook allowed to carry them).
func TestRepairAddsNoKeyToLastApplied(t *testing.T) {
	spec := func(field string, v any) map[string]any {
		return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"template": map[string]any{"spec": map[string]any{field: v}}}}
	}
	fieldRef := func(fieldPath string, defaulted bool) []any {
		ref := map[string]any{"fieldPath": fieldPath}
		if defaulted {
			ref["apiVersion"] = "v1"
		}
		env := map[string]any{"name": "X", "valueFrom": map[string]any{"fieldRef": ref}}
		return []any{map[string]any{"name": "app", "env": []any{env}}}
	}
	m := func(kv ...string) map[string]any {
		out := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	selector := func(expressions bool) map[string]any {
		s := map[string]any{"matchLabels": m("app", "web")}
		if expressions {
			s["matchExpressions"] = []any{map[string]any{"key": "track", "operator": "NotIn", "values": []any{"canary"}}}
		}
		return s
	}
	constraint := func(selector map[string]any) map[string]any {
		return map[string]any{"topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": selector}
	}
	tests := map[string]struct {
		field               string
		lastApplied, before any
		restored, want      any
		// unit is the path of the restored unit under field, when it is
		// not field itself.
		unit string
		// adjacent: adjacentApply holds (the replaced template was made
		// by the apply right after the restored revision).
		adjacent bool
		// ownersUnknown: the object before the undo had no managedFields
		// (the audit's reconstruction).
		ownersUnknown bool
	}{
		"a scalar takes the restored value": {
			field: "serviceAccountName", lastApplied: "v2", before: "v2", restored: "v1", want: "v1",
		},
		"a map with last-applied's keys takes the restored value": {
			field: "nodeSelector", lastApplied: m("a", "1", "c", "3"), before: m("a", "1", "c", "3"), restored: m("a", "1", "c", "4"), want: m("a", "1", "c", "4"),
		},
		"a map without one of last-applied's keys takes the restored value": {
			field: "nodeSelector", lastApplied: m("a", "1", "c", "3"), before: m("a", "1", "c", "3"), restored: m("a", "1"), want: m("a", "1"),
		},
		"a map with a key last-applied lacks keeps last-applied's value": {
			field: "nodeSelector", lastApplied: m("a", "1", "c", "3"), before: m("a", "1", "b", "2", "c", "3"), restored: m("a", "1", "b", "2"), want: m("a", "1", "c", "3"),
		},
		"a map with a key the adjacent apply deleted takes the restored value": {
			field: "nodeSelector", lastApplied: m("a", "1"), before: m("a", "1"), restored: m("a", "1", "c", "3"), want: m("a", "1", "c", "3"), adjacent: true,
		},
		"without managedFields a key the adjacent apply seems to have deleted proves nothing": {
			field: "nodeSelector", lastApplied: m("a", "1"), before: m("a", "1"), restored: m("a", "1", "c", "3"), want: m("a", "1"), adjacent: true, ownersUnknown: true,
		},
		"a map with a key the adjacent apply kept keeps last-applied's value": {
			field: "nodeSelector", lastApplied: m("a", "1", "c", "3"), before: m("a", "1", "b", "2", "c", "3"), restored: m("a", "1", "b", "2"), want: m("a", "1", "c", "3"), adjacent: true,
		},
		"a fieldRef with the apiVersion the server defaults takes the restored value": {
			field: "containers", unit: "[name=app].env[name=X].valueFrom.fieldRef",
			lastApplied: fieldRef("metadata.namespace", false), before: fieldRef("metadata.namespace", true),
			restored: fieldRef("metadata.name", true), want: fieldRef("metadata.name", true),
		},
		"a longer list inside a value takes the restored value": {
			field:       "tolerations",
			lastApplied: []any{map[string]any{"key": "k1"}},
			before:      []any{map[string]any{"key": "k1"}},
			restored:    []any{map[string]any{"key": "k2"}, map[string]any{"key": "k1", "operator": "Exists"}},
			want:        []any{map[string]any{"key": "k2"}, map[string]any{"key": "k1", "operator": "Exists"}},
		},
		"a constraint whose selector gained matchExpressions keeps last-applied's value": {
			field:       "topologySpreadConstraints",
			unit:        "[topologyKey=zone,whenUnsatisfiable=DoNotSchedule].labelSelector",
			lastApplied: []any{constraint(selector(false))},
			before:      []any{constraint(selector(false))},
			restored:    []any{constraint(selector(true))},
			want:        []any{constraint(selector(false))},
		},
		"a constraint whose selector lost matchExpressions takes the restored value": {
			field:       "topologySpreadConstraints",
			unit:        "[topologyKey=zone,whenUnsatisfiable=DoNotSchedule].labelSelector",
			lastApplied: []any{constraint(selector(true))},
			before:      []any{constraint(selector(true))},
			restored:    []any{constraint(selector(false))},
			want:        []any{constraint(selector(false))},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pr := &undoProof{
				old: spec(tc.field, tc.before), new: spec(tc.field, tc.restored), original: spec(tc.field, tc.lastApplied),
				owned: func(Path) bool { return true }, adjacent: tc.adjacent, ownersKnown: !tc.ownersUnknown,
			}
			got := pr.repairedLastApplied([]Path{mustPath(t, "spec.template.spec."+tc.field+tc.unit)})
			if diff := cmp.Diff(spec(tc.field, tc.want), got); diff != "" {
				t.Errorf("repaired last-applied (-want +got):\n%s", diff)
			}
		})
	}
}
