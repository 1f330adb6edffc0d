package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A template that is a revision's less some fields is what an older
// kubectl's rollout undo restores (fixtures: kubectl 1.32 drops
// hostnameOverride, which both revisions have); any other difference, or
// a subset of the template the object already had, is none.
func TestRestoresRevisionLessFields(t *testing.T) {
	const dir = "undo-older-kubectl"
	revisions := readObjects(t, dir, "revisions.yaml")
	undo := func() *unstructured.Unstructured { return readObject(t, dir, "undo-dropping-fields.yaml") }
	containers := func(obj *unstructured.Unstructured) []any {
		t.Helper()
		c, _, err := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := map[string]struct {
		new       *unstructured.Unstructured
		revisions []*unstructured.Unstructured
		want      bool
	}{
		"revision 1 without hostnameOverride": {
			new: undo(), revisions: revisions, want: true,
		},
		"revision 1 exactly is DetectRollback's, not a subset": {
			new: readObject(t, dir, "undo-exact.yaml"), revisions: revisions,
		},
		"the current template without hostnameOverride": {
			new: readObject(t, dir, "removed-field.yaml"), revisions: revisions,
		},
		// What is left of the current template also fits in revision 1
		// (the image, the one field where they differ, is gone): a Helm
		// upgrade or a script that drops fields is no undo.
		"the current template without the image and hostnameOverride": {
			new: func() *unstructured.Unstructured {
				obj := readObject(t, dir, "removed-field.yaml")
				c := containers(obj)
				delete(c[0].(map[string]any), "image")
				return setField(t, obj, c, "spec", "template", "spec", "containers")
			}(),
			revisions: revisions,
		},
		"revision 1 without hostnameOverride and with another image": {
			new:       setField(t, undo(), []any{map[string]any{"name": "web", "image": "nginx:3"}}, "spec", "template", "spec", "containers"),
			revisions: revisions,
		},
		"revision 1 without hostnameOverride and with a label no revision has": {
			new: setField(t, undo(), "blue", "spec", "template", "metadata", "labels", "track"), revisions: revisions,
		},
		"revision 1 without hostnameOverride and with a second container": {
			new:       setField(t, undo(), append(containers(undo()), map[string]any{"name": "sidecar", "image": "busybox"}), "spec", "template", "spec", "containers"),
			revisions: revisions,
		},
		"revision 1 without hostnameOverride and without its container": {
			new: setField(t, undo(), []any{}, "spec", "template", "spec", "containers"), revisions: revisions,
		},
		"revisions of another Deployment": {
			new: undo(), revisions: ownedByAnother(revisions),
		},
		"no revisions": {
			new: undo(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := RestoresRevisionLessFields(readObject(t, dir, "old.yaml"), tc.new, tc.revisions)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("RestoresRevisionLessFields (-want +got):\n%s", diff)
			}
		})
	}
}

// A template whose metadata is as it was and whose pod spec is a
// revision's is what the Kubernetes Dashboard's rollback writes (it copies
// the ReplicaSet's template.spec alone): after a restart, the stamp stays.
func TestRestoresRevisionSpec(t *testing.T) {
	const dir = "undo-older-kubectl"
	revisions := readObjects(t, dir, "revisions.yaml")
	restarted := func(obj *unstructured.Unstructured) *unstructured.Unstructured {
		t.Helper()
		if err := unstructured.SetNestedField(obj.Object, "2026-11-27T09:00:00Z", "spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt"); err != nil {
			t.Fatal(err)
		}
		return obj
	}
	old := func() *unstructured.Unstructured { return restarted(readObject(t, dir, "old.yaml")) }
	rollback := func() *unstructured.Unstructured { return restarted(readObject(t, dir, "undo-exact.yaml")) }
	tests := map[string]struct {
		old, new  *unstructured.Unstructured
		revisions []*unstructured.Unstructured
		want      bool
	}{
		"revision 1's pod spec under the restarted template's metadata": {
			old: old(), new: rollback(), revisions: revisions, want: true,
		},
		// DetectRollback decides an exact match first.
		"revision 1 exactly, no restart": {
			old: readObject(t, dir, "old.yaml"), new: readObject(t, dir, "undo-exact.yaml"), revisions: revisions, want: true,
		},
		"revision 1's pod spec with a label no revision has": {
			old: old(), new: setField(t, rollback(), "blue", "spec", "template", "metadata", "labels", "track"), revisions: revisions,
		},
		"revision 1's pod spec without the restart's stamp is DetectRollback's alone": {
			old: old(), new: readObject(t, dir, "undo-exact.yaml"), revisions: revisions,
		},
		"a pod spec no revision has": {
			old: old(), new: setField(t, rollback(), []any{map[string]any{"name": "web", "image": "nginx:3"}}, "spec", "template", "spec", "containers"), revisions: revisions,
		},
		"the current pod spec": {
			old: old(), new: old(), revisions: revisions,
		},
		"revisions of another Deployment": {
			old: old(), new: rollback(), revisions: ownedByAnother(revisions),
		},
		"no revisions": {
			old: old(), new: rollback(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := RestoresRevisionSpec(tc.old, tc.new, tc.revisions)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("RestoresRevisionSpec (-want +got):\n%s", diff)
			}
		})
	}
}

// setField sets path of obj to value and returns obj.
func setField(t *testing.T, obj *unstructured.Unstructured, value any, path ...string) *unstructured.Unstructured {
	t.Helper()
	if err := unstructured.SetNestedField(obj.Object, value, path...); err != nil {
		t.Fatal(err)
	}
	return obj
}

// ownedByAnother returns copies of revisions owned by another object.
func ownedByAnother(revisions []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, r := range revisions {
		r = r.DeepCopy()
		refs := r.GetOwnerReferences()
		refs[0].UID = "u-2"
		r.SetOwnerReferences(refs)
		out = append(out, r)
	}
	return out
}

// A custom kind's ReplicaSet (an Argo Rollout's) holds its owner's template
// and what its controller and the API server added (canary labels,
// anti-affinity, the pod defaults a custom resource's template never
// gets). A write that adds some of those additions to the Rollout's
// template (a client that normalises it) fits in the current ReplicaSet's
// template and restores nothing: no undo shape. A template that fits in
// an older ReplicaSet's still is one (a CRD that prunes a field of the
// restored template; internal/review's TestUndoOfARollout).
func TestUndoShapesOfACustomKindSkipItsCurrentReplicaSet(t *testing.T) {
	const dir = "undo-older-kubectl"
	revisions := readObjects(t, dir, "revisions.yaml")
	rollout := func(image string, drop ...string) *unstructured.Unstructured {
		t.Helper()
		obj := readObject(t, dir, "old.yaml")
		obj.SetAPIVersion("argoproj.io/v1alpha1")
		obj.SetKind("Rollout")
		c, _, err := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		if err != nil {
			t.Fatal(err)
		}
		c[0].(map[string]any)["image"] = image
		for _, f := range drop {
			delete(c[0].(map[string]any), f)
		}
		return setField(t, obj, c, "spec", "template", "spec", "containers")
	}
	// Revision 2's template is the current one with the pod defaults.
	current := rollout("nginx:2", "imagePullPolicy", "terminationMessagePolicy")
	tests := map[string]struct {
		new                 *unstructured.Unstructured
		lessFields, podSpec bool
	}{
		"a default of the current revision added":   {new: rollout("nginx:2", "terminationMessagePolicy")},
		"every default of the current revision":     {new: rollout("nginx:2")},
		"revision 1 less a field its CRD prunes":    {new: rollout("nginx:1", "terminationMessagePolicy"), lessFields: true},
		"revision 1's pod spec, metadata unchanged": {new: rollout("nginx:1"), lessFields: false, podSpec: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := RestoresRevisionLessFields(current, tc.new, revisions); got != tc.lessFields {
				t.Errorf("RestoresRevisionLessFields = %v, want %v", got, tc.lessFields)
			}
			if got := RestoresRevisionSpec(current, tc.new, revisions); got != tc.podSpec {
				t.Errorf("RestoresRevisionSpec = %v, want %v", got, tc.podSpec)
			}
		})
	}
}
