package merge

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRemovePatch(t *testing.T) {
	deployment := map[string]any{"kind": "Deployment", "spec": map[string]any{"template": map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"kubectl.kubernetes.io/restartedAt": "2022-07-26T11:44:32+08:00"}},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "nginx", "env": []any{
			map[string]any{"name": "ANOTHER_ENV", "value": "who cares?"},
			map[string]any{"name": "TO_BE_DELETED", "value": "needs to be deleted!"},
		}}}},
	}}}
	secret := map[string]any{"kind": "Secret", "data": map[string]any{"password": "c2VjcmV0"}}
	// The spec.behavior that the server made of a patched
	// scaleDown.stabilizationWindowSeconds (testdata/kinds/hpa).
	policy := func(typ string, value int64) map[string]any {
		return map[string]any{"periodSeconds": int64(15), "type": typ, "value": value}
	}
	hpa := map[string]any{"kind": "HorizontalPodAutoscaler", "spec": map[string]any{
		"behavior": map[string]any{
			"scaleDown": map[string]any{"policies": []any{policy("Percent", 100)}, "selectPolicy": "Max", "stabilizationWindowSeconds": int64(60)},
			"scaleUp":   map[string]any{"policies": []any{policy("Pods", 4), policy("Percent", 100)}, "selectPolicy": "Max", "stabilizationWindowSeconds": int64(0)},
		},
		"metrics": []any{map[string]any{"type": "Pods"}},
	}}
	tests := map[string]struct {
		obj     map[string]any
		path    string
		want    string
		wantErr bool
	}{
		"serviceAccountName goes with its deprecated alias, or the server puts it back": {
			obj:  map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"template": map[string]any{"spec": map[string]any{"serviceAccountName": "builder", "serviceAccount": "builder"}}}},
			path: "spec.template.spec.serviceAccountName",
			want: `[{"op":"test","path":"/spec/template/spec/serviceAccountName","value":"builder"},{"op":"remove","path":"/spec/template/spec/serviceAccountName"},` +
				`{"op":"test","path":"/spec/template/spec/serviceAccount","value":"builder"},{"op":"remove","path":"/spec/template/spec/serviceAccount"}]`,
		},
		"a custom resource's fields of those names are its own: only the one removed": {
			obj:  map[string]any{"apiVersion": "example.com/v1", "kind": "Deployment", "spec": map[string]any{"serviceAccountName": "old", "serviceAccount": "runner"}},
			path: "spec.serviceAccountName",
			want: `[{"op":"test","path":"/spec/serviceAccountName","value":"old"},{"op":"remove","path":"/spec/serviceAccountName"}]`,
		},
		"a map key is tested by its value": {
			obj:  deployment,
			path: "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]",
			want: `[{"op":"test","path":"/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt","value":"2022-07-26T11:44:32+08:00"},{"op":"remove","path":"/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt"}]`,
		},
		"a list element is tested by its merge key, and so is each enclosing list element": {
			obj:  deployment,
			path: "spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]",
			want: `[{"op":"test","path":"/spec/template/spec/containers/0/name","value":"nginx"},{"op":"test","path":"/spec/template/spec/containers/0/env/1/name","value":"TO_BE_DELETED"},{"op":"remove","path":"/spec/template/spec/containers/0/env/1"}]`,
		},
		"a field inside a list element is tested by the element's key and its own value": {
			obj:  deployment,
			path: "spec.template.spec.containers[name=nginx].env[name=ANOTHER_ENV].value",
			want: `[{"op":"test","path":"/spec/template/spec/containers/0/name","value":"nginx"},{"op":"test","path":"/spec/template/spec/containers/0/env/0/name","value":"ANOTHER_ENV"},{"op":"test","path":"/spec/template/spec/containers/0/env/0/value","value":"who cares?"},{"op":"remove","path":"/spec/template/spec/containers/0/env/0/value"}]`,
		},
		"a Secret's value is never in the patch": {
			obj:  secret,
			path: "data.password",
			want: `[{"op":"remove","path":"/data/password"}]`,
		},
		"a small list is tested by its value": {
			obj:  hpa,
			path: "spec.metrics",
			want: `[{"op":"test","path":"/spec/metrics","value":[{"type":"Pods"}]},{"op":"remove","path":"/spec/metrics"}]`,
		},
		"a struct whose value outgrows a warning has no patch": {
			obj: hpa, path: "spec.behavior", wantErr: true,
		},
		"a missing field has no patch": {
			obj: deployment, path: "spec.template.spec.containers[name=nginx].env[name=GONE]", wantErr: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := mustPath(t, tc.path)
			got, err := "", fmt.Errorf("no field %s", p)
			if ptr, ok := JSONPointer(tc.obj, p); ok {
				got, err = removePatch(tc.obj, p, ptr)
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("removePatch error = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOnlyOrphansStillPresentGetARemovePatch(t *testing.T) {
	obj := map[string]any{"metadata": map[string]any{"labels": map[string]any{"debug": "true"}}}
	facts := withRemovePatches(obj, []FieldFact{
		{Path: mustPath(t, "metadata.labels.debug")},
		{Path: mustPath(t, "metadata.labels.gone")},
	})
	want := []string{`[{"op":"test","path":"/metadata/labels/debug","value":"true"},{"op":"remove","path":"/metadata/labels/debug"}]`, ""}
	if diff := cmp.Diff(want, []string{facts[0].RemovePatch, facts[1].RemovePatch}); diff != "" {
		t.Errorf("remove patches (-want +got):\n%s", diff)
	}
}

// The fields that a removal of an orphan must take with it, as pointers
// into the object the fact's Pointer points into: a built-in pod spec's
// serviceAccountName goes with its deprecated alias when the alias is a
// copy of it. An alias of another value is no copy: removing the name
// would make the API server take the alias's service account instead, so
// the fact gets no pointer (nothing to prune) and no remove patch.
func TestRemovalsTakeTheAliasWithThem(t *testing.T) {
	podSpec := func(kind, apiVersion string, fields map[string]any) map[string]any {
		if kind == "Pod" {
			return map[string]any{"apiVersion": apiVersion, "kind": kind, "spec": fields}
		}
		return map[string]any{"apiVersion": apiVersion, "kind": kind, "spec": map[string]any{"template": map[string]any{"spec": fields}}}
	}
	tests := map[string]struct {
		obj             map[string]any
		path            string
		wantPointer     string
		wantRemovedWith []string
		wantPatch       bool
	}{
		"a Deployment's serviceAccountName goes with its alias": {
			obj:  podSpec("Deployment", "apps/v1", map[string]any{"serviceAccountName": "builder", "serviceAccount": "builder"}),
			path: "spec.template.spec.serviceAccountName", wantPointer: "/spec/template/spec/serviceAccountName",
			wantRemovedWith: []string{"/spec/template/spec/serviceAccount"}, wantPatch: true,
		},
		"a Pod's serviceAccountName is immutable: nothing is removed": {
			obj:  podSpec("Pod", "v1", map[string]any{"serviceAccountName": "builder", "serviceAccount": "builder"}),
			path: "spec.serviceAccountName",
		},
		"a serviceAccountName without its alias goes alone": {
			obj:  podSpec("Deployment", "apps/v1", map[string]any{"serviceAccountName": "builder"}),
			path: "spec.template.spec.serviceAccountName", wantPointer: "/spec/template/spec/serviceAccountName", wantPatch: true,
		},
		"an alias of another service account is no copy: nothing is removed": {
			obj:  podSpec("Deployment", "apps/v1", map[string]any{"serviceAccountName": "builder", "serviceAccount": "runner"}),
			path: "spec.template.spec.serviceAccountName",
		},
		"a custom resource's fields of those names are its own": {
			obj:  podSpec("Deployment", "example.com/v1", map[string]any{"serviceAccountName": "builder", "serviceAccount": "builder"}),
			path: "spec.template.spec.serviceAccountName", wantPointer: "/spec/template/spec/serviceAccountName", wantPatch: true,
		},
		"any other field goes alone": {
			obj:  podSpec("Deployment", "apps/v1", map[string]any{"serviceAccountName": "builder", "serviceAccount": "builder", "hostname": "h"}),
			path: "spec.template.spec.hostname", wantPointer: "/spec/template/spec/hostname", wantPatch: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			orphans := withRemovePatches(tc.obj, []FieldFact{{Path: mustPath(t, tc.path)}})
			dependents := withPointers(tc.obj, []FieldFact{{Path: mustPath(t, tc.path)}})
			for _, f := range []FieldFact{orphans[0], dependents[0]} {
				if diff := cmp.Diff(tc.wantPointer, f.Pointer); diff != "" {
					t.Errorf("pointer (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tc.wantRemovedWith, f.RemovedWith); diff != "" {
					t.Errorf("removed with (-want +got):\n%s", diff)
				}
			}
			if got := orphans[0].RemovePatch != ""; got != tc.wantPatch {
				t.Errorf("remove patch %q, want one: %v", orphans[0].RemovePatch, tc.wantPatch)
			}
		})
	}
}
