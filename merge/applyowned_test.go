package merge

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The ssa-restarted-at fixture's object was applied server-side by
// kubectl (an Apply entry owning the image, the replicas and the rest of
// the manifest) and restarted by kubectl-rollout (an Update entry).
func TestApplyOwnedChanges(t *testing.T) {
	const image = "spec.template.spec.containers[name=nginx].image"
	tests := map[string]struct {
		write func(obj *unstructured.Unstructured)
		// old changes the stored object's managedFields.
		old       func(obj *unstructured.Unstructured)
		wantPaths []string
		wantOwner string
	}{
		"set image changes a field the applier owns": {
			write:     setImage("nginx:1.99"),
			wantPaths: []string{image}, wantOwner: "kubectl",
		},
		"scale changes the applied replicas": {
			write: func(obj *unstructured.Unstructured) {
				setPath(t, obj, int64(7), "spec", "replicas")
			},
			wantPaths: []string{"spec.replicas"}, wantOwner: "kubectl",
		},
		"removing an applied env var": {
			write: func(obj *unstructured.Unstructured) {
				containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
				c := containers[0].(map[string]any)
				delete(c, "env")
				setPath(t, obj, containers, "spec", "template", "spec", "containers")
			},
			wantPaths: []string{"spec.template.spec.containers[name=nginx].env[name=FEATURE_FLAGS]",
				"spec.template.spec.containers[name=nginx].env[name=LOG_LEVEL]"}, wantOwner: "kubectl",
		},
		"a field only kubectl-rollout owns is nobody's apply": {
			write: func(obj *unstructured.Unstructured) {
				setPath(t, obj, "2030-01-01T00:00:00Z", "spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt")
			},
			wantPaths: nil,
		},
		"a value a mutating webhook changed after the API server tracked the write stays its applier's": {
			// kubectl label's write, tracked (its entry added), then a
			// digest-pinning webhook rewrote the applied image: the
			// applier still owns it, so the write did not take it over.
			write: func(obj *unstructured.Unstructured) {
				setPath(t, obj, "web", "metadata", "labels", "team")
				setImage("nginx:1.16.1@sha256:0123")(obj)
				obj.SetManagedFields(append(obj.GetManagedFields(), metav1.ManagedFieldsEntry{
					Manager: "kubectl-label", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1",
					FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:team":{}}}}`),
				}))
			},
			wantPaths: nil,
		},
		"a new field is owned by nobody": {
			write: func(obj *unstructured.Unstructured) {
				setPath(t, obj, int64(30), "spec", "minReadySeconds")
			},
			wantPaths: nil,
		},
		"an object that no one applied server-side": {
			write: setImage("nginx:1.99"),
			old: func(obj *unstructured.Unstructured) {
				mfs := obj.GetManagedFields()
				for i := range mfs {
					if mfs[i].Operation == "Apply" {
						mfs[i].Operation, mfs[i].Manager = "Update", "kubectl-client-side-apply"
					}
				}
				obj.SetManagedFields(mfs)
			},
			wantPaths: nil,
		},
		"an Apply entry of a subresource is not the object's applier": {
			write: setImage("nginx:1.99"),
			old: func(obj *unstructured.Unstructured) {
				mfs := obj.GetManagedFields()
				for i := range mfs {
					if mfs[i].Operation == "Apply" {
						mfs[i].Subresource = "status"
					}
				}
				obj.SetManagedFields(mfs)
			},
			wantPaths: nil,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old := readObject(t, "ssa-restarted-at", "new.yaml")
			if tc.old != nil {
				tc.old(old)
			}
			new := old.DeepCopy()
			tc.write(new)
			an, err := NewAnalyzer().AnalyzeUpdate(old, new)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantPaths, paths(an.ApplyOwnedChanges)); diff != "" {
				t.Errorf("apply-owned changes (-want +got):\n%s", diff)
			}
			for _, f := range an.ApplyOwnedChanges {
				if len(f.Owners) != 1 || f.Owners[0].Manager != tc.wantOwner || f.Owners[0].Operation != "Apply" {
					t.Errorf("%s: owners %+v, want the Apply entry of %s alone", f.Path, f.Owners, tc.wantOwner)
				}
			}
		})
	}
}

// The set image fact carries the applied value and the new one.
func TestApplyOwnedChangeValues(t *testing.T) {
	old := readObject(t, "ssa-restarted-at", "new.yaml")
	new := old.DeepCopy()
	setImage("nginx:1.99")(new)
	an, err := NewAnalyzer().AnalyzeUpdate(old, new)
	if err != nil {
		t.Fatal(err)
	}
	if len(an.ApplyOwnedChanges) != 1 {
		t.Fatalf("apply-owned changes = %+v, want one", an.ApplyOwnedChanges)
	}
	f := an.ApplyOwnedChanges[0]
	if f.Live != "nginx:1.16.1" || f.Result != "nginx:1.99" {
		t.Errorf("values live %v, result %v; want nginx:1.16.1 and nginx:1.99", f.Live, f.Result)
	}
}

// dropLastApplied deletes obj's last-applied annotation.
func dropLastApplied(obj *unstructured.Unstructured) {
	annots := obj.GetAnnotations()
	delete(annots, LastAppliedAnnotation)
	obj.SetAnnotations(annots)
}

func setImage(image string) func(obj *unstructured.Unstructured) {
	return func(obj *unstructured.Unstructured) {
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		containers[0].(map[string]any)["image"] = image
		_ = unstructured.SetNestedSlice(obj.Object, containers, "spec", "template", "spec", "containers")
	}
}

func setPath(t *testing.T, obj *unstructured.Unstructured, v any, fields ...string) {
	t.Helper()
	if err := unstructured.SetNestedField(obj.Object, v, fields...); err != nil {
		t.Fatal(err)
	}
}

// After kubectl hygiene migrate gave kubectl's Apply entry the fields of
// last-applied and the server's defaults, the writes of people change
// only what that entry really applies: the objects of the generative
// soak (seed 271126; see each fixture's README.md).
func TestApplyOwnedChangesAfterMigration(t *testing.T) {
	type owned struct{ Path, Managers string }
	tests := map[string]struct {
		dir string
		// old changes the stored object before the write, and new the
		// object after it.
		old, new func(obj *unstructured.Unstructured)
		want     []owned
	}{
		"kubectl replace removes annotations kubectl's empty annotations map never held and changes a default it never applied": {
			// Sequence 030, step 24: the annotation an undo restored and
			// the mesh's stamp are the undo's; imagePullPolicy Always
			// was a default for the migrated image, which last-applied
			// never had. Helm's label is Helm's.
			dir:  "migrated-then-replaced",
			want: []owned{{"metadata.labels[app.kubernetes.io/managed-by]", "helm"}},
		},
		"without last-applied, the empty annotations map still holds no annotation": {
			// Nothing tells what kubectl applies: its entry owns the
			// pull policy, and that is all there is to go on.
			dir: "migrated-then-replaced",
			old: dropLastApplied,
			want: []owned{
				{"metadata.labels[app.kubernetes.io/managed-by]", "helm"},
				{"spec.template.spec.containers[name=minio].imagePullPolicy", "kubectl"},
			},
		},
		"kubectl set serviceaccount changes the name, not the alias the server writes beside it": {
			// Sequence 056, step 23: serviceAccount is no field of
			// last-applied, so kubectl's server-side apply never
			// applied it (the migration handed it over as a default).
			dir:  "migrated-then-set-serviceaccount",
			want: []owned{{"spec.template.spec.serviceAccountName", "kubectl kustomize-controller"}},
		},
		"migrated to another manager, the alias changes with the name": {
			// kubectl hygiene migrate --field-manager argocd-controller:
			// its entry owns the alias too, which the server copies
			// from the name; the change is the name's.
			dir: "migrated-then-set-serviceaccount",
			old: func(obj *unstructured.Unstructured) {
				mfs := obj.GetManagedFields()
				for i := range mfs {
					if mfs[i].Manager == "kubectl" && mfs[i].Operation == "Apply" {
						mfs[i].Manager = "argocd-controller"
					}
				}
				obj.SetManagedFields(mfs)
			},
			want: []owned{{"spec.template.spec.serviceAccountName", "argocd-controller kustomize-controller"}},
		},
		"an applier that applied the alias alone is told at the alias": {
			// A manifest with only the deprecated serviceAccount: no
			// applier and no last-applied holds the name.
			dir: "migrated-then-set-serviceaccount",
			new: dropLastApplied,
			old: func(obj *unstructured.Unstructured) {
				dropLastApplied(obj)
				for _, e := range obj.Object["metadata"].(map[string]any)["managedFields"].([]any) {
					if e := e.(map[string]any); e["operation"] == "Apply" {
						podSpec, _, _ := unstructured.NestedMap(e, "fieldsV1", "f:spec", "f:template", "f:spec")
						delete(podSpec, "f:serviceAccountName")
						_ = unstructured.SetNestedMap(e, podSpec, "fieldsV1", "f:spec", "f:template", "f:spec")
					}
				}
			},
			want: []owned{{"spec.template.spec.serviceAccount", "kubectl"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old, new := readObject(t, tc.dir, "old.yaml"), readObject(t, tc.dir, "new.yaml")
			if tc.old != nil {
				tc.old(old)
			}
			if tc.new != nil {
				tc.new(new)
			}
			an, err := NewAnalyzer().AnalyzeUpdate(old, new)
			if err != nil {
				t.Fatal(err)
			}
			var got []owned
			for _, f := range an.ApplyOwnedChanges {
				var managers []string
				for _, o := range f.Owners {
					managers = append(managers, o.Manager)
				}
				slices.Sort(managers)
				got = append(got, owned{f.Path.String(), strings.Join(managers, " ")})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("apply-owned changes (-want +got):\n%s", diff)
			}
		})
	}
}
