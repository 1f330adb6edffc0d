package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The patches of several decisions are each written against the object
// as the request has it: ApplyRemedy refuses those that would move or
// replace what another addresses, naming both rules and paths, instead of
// removing the wrong element or dropping a repair.
func TestApplyRemedyRefusesDependentPatches(t *testing.T) {
	const la = "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"
	deployment := func() map[string]any {
		env := []any{map[string]any{"name": "A"}, map[string]any{"name": "B"}, map[string]any{"name": "C"}}
		return map[string]any{"kind": "Deployment",
			"metadata": map[string]any{"annotations": map[string]any{"kubectl.kubernetes.io/last-applied-configuration": "{}", "team": "a"}},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "app:1", "env": env}}}}
	}
	configMap := func() map[string]any {
		return map[string]any{"kind": "ConfigMap", "data": map[string]any{"0": "a", "1": "b", "2": "c"}}
	}
	user := func(ops ...PatchOperation) Decision {
		return Decision{Rule: "user-rule", Action: ActionRepair, Patch: ops}
	}
	prune := func(ptr string) Decision {
		return Decision{Rule: RuleOrphanedField, Action: ActionPrune, Patch: Patch{{Op: OpRemove, Path: ptr}}}
	}
	stale := Decision{Rule: RuleStaleLastApplied, Action: ActionRepair, Patch: Patch{{Op: OpAdd, Path: la, Value: `{"a":1}`}}}
	tests := map[string]struct {
		obj       map[string]any
		decisions []Decision
		want      map[string]any
		wantErr   string
	}{
		"a user add into a list that an orphan's prune removes from": {
			obj: deployment(),
			decisions: []Decision{user(PatchOperation{Op: OpAdd, Path: "/spec/containers/0/env/0", Value: map[string]any{"name": "NEW"}}),
				prune("/spec/containers/0/env/2")},
			wantErr: "rule user-rule's add of /spec/containers/0/env/0 and rule orphaned-field's remove of /spec/containers/0/env/2 address elements of one list, /spec/containers/0/env: " +
				"each decision's patch is written against the object as the request has it, so the one would change what the other addresses",
		},
		"a user replace of a container that an orphan's prune removes from": {
			obj: deployment(),
			decisions: []Decision{user(PatchOperation{Op: OpReplace, Path: "/spec/containers/0", Value: map[string]any{"name": "app"}}),
				prune("/spec/containers/0/env/2")},
			wantErr: "rule user-rule's replace of /spec/containers/0 and rule orphaned-field's remove of /spec/containers/0/env/2 touch a field and one inside it: " +
				"each decision's patch is written against the object as the request has it, so the one would change what the other addresses",
		},
		"a user removal of the annotations beside the stale last-applied's repair": {
			obj:       deployment(),
			decisions: []Decision{user(PatchOperation{Op: OpRemove, Path: "/metadata/annotations"}), stale},
			wantErr: "rule user-rule's remove of /metadata/annotations and rule stale-last-applied's add of " + la + " touch a field and one inside it: " +
				"each decision's patch is written against the object as the request has it, so the one would change what the other addresses",
		},
		"two decisions that set the same field": {
			obj:       deployment(),
			decisions: []Decision{user(PatchOperation{Op: OpAdd, Path: la, Value: "{}"}), stale},
			wantErr: "rule user-rule's add of " + la + " and rule stale-last-applied's add of " + la + " touch the same field: " +
				"each decision's patch is written against the object as the request has it, so the one would change what the other addresses",
		},
		"a user add of an annotation beside the stale last-applied's repair": {
			obj:       deployment(),
			decisions: []Decision{user(PatchOperation{Op: OpAdd, Path: "/metadata/annotations/owner", Value: "b"}), stale},
			want: func() map[string]any {
				o := deployment()
				annots := o["metadata"].(map[string]any)["annotations"].(map[string]any)
				annots["owner"], annots["kubectl.kubernetes.io/last-applied-configuration"] = "b", `{"a":1}`
				return o
			}(),
		},
		"ConfigMap keys that look like indices are map keys": {
			obj:       configMap(),
			decisions: []Decision{user(PatchOperation{Op: OpAdd, Path: "/data/0", Value: "new"}), prune("/data/2")},
			want:      map[string]any{"kind": "ConfigMap", "data": map[string]any{"0": "new", "1": "b"}},
		},
		"two prunes of one list and one inside another's field stay allowed": {
			obj:       deployment(),
			decisions: []Decision{prune("/spec/containers/0/env/0"), prune("/spec/containers/0/env/2"), prune("/spec/containers/0/env/2/name")},
			want: func() map[string]any {
				o := deployment()
				o["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["env"] = []any{map[string]any{"name": "B"}}
				return o
			}(),
		},
		"one decision's own operations are its author's to order": {
			obj: deployment(),
			decisions: []Decision{user(PatchOperation{Op: OpReplace, Path: "/spec/containers/0/image", Value: "app:2"},
				PatchOperation{Op: OpRemove, Path: "/spec/containers/0/env"})},
			want: func() map[string]any {
				o := deployment()
				o["spec"].(map[string]any)["containers"] = []any{map[string]any{"name": "app", "image": "app:2"}}
				return o
			}(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ApplyRemedy(tc.obj, tc.decisions)
			if gotErr := errText(err); gotErr != tc.wantErr {
				t.Fatalf("ApplyRemedy error:\n got %s\nwant %s", gotErr, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("object (-want +got):\n%s", diff)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
