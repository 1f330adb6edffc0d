package policy

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

func mustParse(t *testing.T, s string) merge.Path {
	t.Helper()
	p, err := merge.ParsePath(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRemovePatch(t *testing.T) {
	deployment := map[string]any{"kind": "Deployment", "spec": map[string]any{"template": map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"kubectl.kubernetes.io/restartedAt": "2022-07-26T11:44:32+08:00"}},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "nginx", "env": []any{
			map[string]any{"name": "ANOTHER_ENV", "value": "who cares?"},
			map[string]any{"name": "TO_BE_DELETED", "value": "needs to be deleted!"},
		}}}},
	}}}
	secret := map[string]any{"kind": "Secret", "data": map[string]any{"password": "c2VjcmV0"}}
	tests := map[string]struct {
		obj     map[string]any
		path    string
		want    string
		wantErr bool
	}{
		"a map key is tested by its value": {
			obj:  deployment,
			path: "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]",
			want: `[{"op":"test","path":"/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt","value":"2022-07-26T11:44:32+08:00"},{"op":"remove","path":"/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt"}]`,
		},
		"a list element is tested by its merge key": {
			obj:  deployment,
			path: "spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]",
			want: `[{"op":"test","path":"/spec/template/spec/containers/0/env/1/name","value":"TO_BE_DELETED"},{"op":"remove","path":"/spec/template/spec/containers/0/env/1"}]`,
		},
		"a Secret's value is never in the patch": {
			obj:  secret,
			path: "data.password",
			want: `[{"op":"remove","path":"/data/password"}]`,
		},
		"a missing field has no patch": {
			obj: deployment, path: "spec.template.spec.containers[name=nginx].env[name=GONE]", wantErr: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := RemovePatch(tc.obj, mustParse(t, tc.path))
			if (err != nil) != tc.wantErr {
				t.Fatalf("RemovePatch error = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRemovePatchesReachRego(t *testing.T) {
	obj := map[string]any{"metadata": map[string]any{"labels": map[string]any{"debug": "true"}}}
	in := loadInput(t, "clean-apply")
	in.Analysis.Orphans = []merge.FieldFact{
		{Path: mustParse(t, "metadata.labels.debug"), Live: "true"},
		{Path: mustParse(t, "metadata.labels.gone"), Live: "x"},
	}
	in.RemovePatches = RemovePatches(obj, in.Analysis)
	if len(in.RemovePatches) != 1 || len(RemovePatches(obj, nil)) != 0 {
		t.Fatalf("RemovePatches = %v, want one patch", in.RemovePatches)
	}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var back Input
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in.RemovePatches, back.RemovePatches); diff != "" {
		t.Errorf("remove patches after a round trip (-want +got):\n%s", diff)
	}
	got, err := newEngine(t).Evaluate(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`Remove it with: kubectl patch deployment/nginx -n default --type=json -p '[{"op":"test","path":"/metadata/labels/debug","value":"true"},{"op":"remove","path":"/metadata/labels/debug"}]'`,
		"Remove it with: kubectl edit deployment/nginx -n default",
	}
	if len(got) != 2 || !endsWith(got[0].Message, want[0]) || !endsWith(got[1].Message, want[1]) {
		t.Errorf("decisions = %+v, want messages ending with %q", got, want)
	}
}

func endsWith(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}
