package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestAnalyzeUpdate(t *testing.T) {
	base := func() *unstructured.Unstructured {
		f := loadFixture(t, "seed001-set-image-reverted")
		obj := f.modified.DeepCopy()
		setLastApplied(t, obj, f.modified)
		return obj
	}
	image := "spec.template.spec.containers[name=nginx].image"
	tests := map[string]struct {
		// prepare, when set, changes the object before the write.
		prepare   func(obj *unstructured.Unstructured)
		edit      func(obj *unstructured.Unstructured)
		operation string
		want      []FieldFact
		orphans   []string
	}{
		"kubectl set image changes a field last-applied owns": {
			edit: func(obj *unstructured.Unstructured) {
				setContainer(obj, "image", "nginx:1.8")
			},
			operation: "update",
			want:      []FieldFact{{Path: mustPath(t, image), Live: "nginx:1.7.9", Result: "nginx:1.8", LastApplied: "nginx:1.7.9"}},
		},
		"kubectl edit removing a port removes an owned list element": {
			edit: func(obj *unstructured.Unstructured) {
				setContainer(obj, "ports", nil)
			},
			operation: "update",
			want: []FieldFact{{
				Path:        mustPath(t, "spec.template.spec.containers[name=nginx].ports[containerPort=80,protocol=TCP]"),
				Live:        map[string]any{"containerPort": float64(80)},
				LastApplied: map[string]any{"containerPort": float64(80)},
			}},
		},
		// Server-side field sets key ports by containerPort and protocol,
		// kubectl's strategic merge patch by containerPort alone: its patch
		// for the next apply is {} and UDP stays, so nothing is reverted.
		"kubectl edit of a port's protocol is no imperative change": {
			edit: func(obj *unstructured.Unstructured) {
				setContainer(obj, "ports", []any{map[string]any{"containerPort": int64(80), "protocol": "UDP"}})
			},
			operation: "update",
			want:      []FieldFact{},
		},
		// After the write there is no last-applied whose values a next
		// apply could put back: that apply patches in its manifest as
		// over an object made without one, and says so (generative seed
		// 271126, sequence 002: kubectl replace of a manifest).
		"kubectl replace without last-applied hands every field over": {
			edit: func(obj *unstructured.Unstructured) {
				setContainer(obj, "image", "nginx:1.8")
				obj.SetAnnotations(nil)
			},
			operation: "update",
			want:      []FieldFact{},
		},
		"kubectl scale sets replicas that last-applied does not own": {
			edit:      func(obj *unstructured.Unstructured) { obj.Object["spec"].(map[string]any)["replicas"] = int64(5) },
			operation: "update",
			want:      []FieldFact{},
		},
		"kubectl label adds a field, which is no imperative change": {
			edit:      func(obj *unstructured.Unstructured) { obj.SetLabels(map[string]string{"team": "a"}) },
			operation: "update",
			want:      []FieldFact{},
		},
		// The API server keeps the deprecated serviceAccount equal to
		// serviceAccountName, the name winning (SetDefaults_PodSpec in
		// 1.37, the v1 conversion before): the next apply of a manifest
		// with the alias alone sets the alias, which the server sets back
		// to the name that the write left. Nothing is put back.
		"kubectl set serviceaccount under a manifest with the deprecated alias alone": {
			prepare:   serviceAccounts(t, map[string]any{"serviceAccount": "web"}, "web"),
			edit:      serviceAccounts(t, nil, "builder"),
			operation: "update",
			want:      []FieldFact{},
		},
		"kubectl set serviceaccount under a manifest with the name and its alias is the name's change": {
			prepare:   serviceAccounts(t, map[string]any{"serviceAccount": "web", "serviceAccountName": "web"}, "web"),
			edit:      serviceAccounts(t, nil, "builder"),
			operation: "update",
			want: []FieldFact{{Path: mustPath(t, "spec.template.spec.serviceAccountName"),
				Live: "web", Result: "builder", LastApplied: "web"}},
		},
		// Without the name the server writes the alias's value into it:
		// the next apply of the alias puts it back in both.
		"kubectl edit removing the name and its alias under a manifest with the alias alone": {
			prepare:   serviceAccounts(t, map[string]any{"serviceAccount": "web"}, "web"),
			edit:      serviceAccounts(t, nil, ""),
			operation: "update",
			want: []FieldFact{{Path: mustPath(t, "spec.template.spec.serviceAccount"),
				Live: "web", LastApplied: "web"}},
		},
		"an apply changes last-applied and is analyzed as an apply": {
			prepare: func(obj *unstructured.Unstructured) {
				obj.SetLabels(map[string]string{"team": "a"})
				withOwner(t, obj, "kubectl-label", `{"f:metadata":{"f:labels":{".":{},"f:team":{}}}}`)
			},
			edit: func(obj *unstructured.Unstructured) {
				manifest := obj.DeepCopy()
				manifest.SetLabels(nil)
				setContainer(manifest, "image", "nginx:2")
				setContainer(obj, "image", "nginx:2")
				setLastApplied(t, obj, manifest)
			},
			operation: "apply",
			want:      []FieldFact{},
			orphans:   []string{"metadata.labels.team"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old := base()
			if tc.prepare != nil {
				tc.prepare(old)
			}
			new := old.DeepCopy()
			tc.edit(new)
			an, err := NewAnalyzer().AnalyzeUpdate(old, new)
			if err != nil {
				t.Fatal(err)
			}
			if an.Operation != tc.operation {
				t.Errorf("operation = %q, want %q", an.Operation, tc.operation)
			}
			if diff := cmp.Diff(tc.want, an.ImperativeChanges, pathString); diff != "" {
				t.Errorf("imperative changes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.orphans, paths(an.Orphans)); diff != "" {
				t.Errorf("orphans (-want +got):\n%s", diff)
			}
		})
	}
}

func setContainer(obj *unstructured.Unstructured, field string, v any) {
	c := obj.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	if v == nil {
		delete(c, field)
		return
	}
	c[field] = v
}

// serviceAccounts returns a change of an object that sets the pod
// template's serviceAccountName and its deprecated alias serviceAccount
// to name ("": removes both), as the API server stores them, and, when
// manifest is set, records last-applied with manifest's pod spec fields
// added.
func serviceAccounts(t *testing.T, manifest map[string]any, name string) func(*unstructured.Unstructured) {
	return func(obj *unstructured.Unstructured) {
		t.Helper()
		if manifest != nil {
			la, err := ParseLastApplied(obj)
			if err != nil {
				t.Fatal(err)
			}
			la = la.DeepCopy()
			for k, v := range manifest {
				if err := unstructured.SetNestedField(la.Object, v, "spec", "template", "spec", k); err != nil {
					t.Fatal(err)
				}
			}
			setLastApplied(t, obj, la)
		}
		podSpec := obj.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		delete(podSpec, "serviceAccount")
		delete(podSpec, "serviceAccountName")
		if name != "" {
			podSpec["serviceAccount"], podSpec["serviceAccountName"] = name, name
		}
	}
}

func TestAnalyzeUpdateWithoutLastApplied(t *testing.T) {
	f := loadFixture(t, "seed002-missing-last-applied")
	new := f.live.DeepCopy()
	setContainer(new, "image", "nginx:2")
	an, err := NewAnalyzer().AnalyzeUpdate(f.live, new)
	if err != nil {
		t.Fatal(err)
	}
	if an.LastApplied.Status != LastAppliedMissing || len(an.ImperativeChanges) != 0 {
		t.Errorf("analysis = %+v, want missing last-applied and no changes", an)
	}
}

// pathString compares paths by their notation.
var pathString = cmp.Transformer("Path", func(p Path) string { return p.String() })

// An object the API server would never send, with a null container, does
// not fit the schema: the update is compared with deduced field sets, in
// which lists are atomic, instead of failing.
func TestAnalyzeUpdateOfObjectThatDoesNotFitTheSchema(t *testing.T) {
	f := loadFixture(t, "seed001-set-image-reverted")
	old := f.modified.DeepCopy()
	setLastApplied(t, old, f.modified)
	new := old.DeepCopy()
	spec := new.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	spec["containers"] = append(spec["containers"].([]any), nil)
	an, err := NewAnalyzer().AnalyzeUpdate(old, new)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"spec.template.spec.containers"}, paths(an.ImperativeChanges)); diff != "" {
		t.Errorf("imperative changes (-want +got):\n%s", diff)
	}
}
