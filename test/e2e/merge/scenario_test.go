package merge_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// script is a scenario's optional testdata/<scenario>/steps.yaml. Without
// it, the scenario applies its numbered manifests in order.
type script struct {
	// Steps run in order.
	Steps []step `json:"steps"`
	// Cleanup holds kubectl command lines run when the scenario ends, e.g.
	// to drop finalizers or delete a CustomResourceDefinition.
	Cleanup [][]string `json:"cleanup"`
}

// step is one action: an apply, an imperative kubectl command, or a wait.
type step struct {
	// Apply is a manifest of the scenario directory, applied with
	// `kubectl apply -f`. Every apply onto an existing object is checked
	// against merge's prediction.
	Apply string `json:"apply,omitempty"`
	// Kubectl is a kubectl command line; an argument naming a file of the
	// scenario directory is replaced by its path.
	Kubectl []string `json:"kubectl,omitempty"`
	// Editor is the EDITOR for Kubectl (`kubectl edit`), run by the shell.
	Editor string `json:"editor,omitempty"`
	// WaitRevisions waits until Count ControllerRevisions match Selector.
	WaitRevisions *struct {
		Selector string `json:"selector"`
		Count    int    `json:"count"`
	} `json:"waitRevisions,omitempty"`
}

func loadScript(t *testing.T, dir string) script {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "steps.yaml"))
	if err == nil {
		var s script
		if err := yaml.UnmarshalStrict(data, &s); err != nil {
			t.Fatalf("decoding %s/steps.yaml: %v", dir, err)
		}
		return s
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	manifests, err := filepath.Glob(filepath.Join(dir, "[0-9]*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(manifests)
	var s script
	for _, m := range manifests {
		s.Steps = append(s.Steps, step{Apply: filepath.Base(m)})
	}
	return s
}

// lastApply is the index of the script's last apply: the one whose facts a
// scenario asserts.
func (s script) lastApply() int {
	last := -1
	for i, st := range s.Steps {
		if st.Apply != "" {
			last = i
		}
	}
	return last
}

// readManifest reads a YAML manifest as kubectl does: YAML to JSON, JSON
// to an unstructured object (integers stay integers).
func readManifest(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(js); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	return obj
}

// getObject returns the object that a manifest names as the server stores
// it, managedFields included, or nil when there is none.
func getObject(t *testing.T, k framework.Kubectl, path string) *unstructured.Unstructured {
	t.Helper()
	out := k.Run(t, "get", "-f", path, "-o", "json", "--show-managed-fields", "--ignore-not-found").MustSucceed(t).Stdout
	if strings.TrimSpace(out) == "" {
		return nil
	}
	return decodeJSON(t, out)
}

func decodeJSON(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON([]byte(s)); err != nil {
		t.Fatalf("decoding object: %v\n%s", err, s)
	}
	return obj
}

// settle waits until the workload controller has observed the object's
// latest generation. The Deployment controller writes the
// deployment.kubernetes.io/revision annotation before it reports the
// generation observed, so the live object that the test reads is the one
// kubectl apply reads next.
func settle(t *testing.T, f *framework.Framework, obj *unstructured.Unstructured) {
	t.Helper()
	if obj == nil {
		return
	}
	apps := f.Client.AppsV1()
	get := map[string]func(ctx context.Context, name string) (metav1.Object, int64, error){
		"Deployment": func(ctx context.Context, name string) (metav1.Object, int64, error) {
			d, err := apps.Deployments(f.Namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, 0, err
			}
			return d, d.Status.ObservedGeneration, nil
		},
		"StatefulSet": func(ctx context.Context, name string) (metav1.Object, int64, error) {
			s, err := apps.StatefulSets(f.Namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, 0, err
			}
			return s, s.Status.ObservedGeneration, nil
		},
		"DaemonSet": func(ctx context.Context, name string) (metav1.Object, int64, error) {
			d, err := apps.DaemonSets(f.Namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, 0, err
			}
			return d, d.Status.ObservedGeneration, nil
		},
	}[obj.GetKind()]
	if get == nil {
		return
	}
	framework.Eventually(t, 30*time.Second, "the controller to observe "+obj.GetName(), func(ctx context.Context) (bool, error) {
		o, observed, err := get(ctx, obj.GetName())
		if err != nil {
			return false, err
		}
		return observed >= o.GetGeneration(), nil
	})
}

// waitForRevisions waits until the StatefulSet controller has recorded n
// ControllerRevisions for selector; rollout undo reads them.
func waitForRevisions(t *testing.T, f *framework.Framework, selector string, n int) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, "controller revisions", func(ctx context.Context) (bool, error) {
		list, err := f.Client.AppsV1().ControllerRevisions(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err
		}
		return len(list.Items) >= n, nil
	})
}

// ignoredAnnotations are written by controllers, asynchronously, on the
// object itself (not through a status subresource).
var ignoredAnnotations = []string{"deployment.kubernetes.io/revision"}

// comparable returns obj without what the server manages and apply never
// computes: resourceVersion, generation, uid, creationTimestamp and
// managedFields, which every write changes; status, which controllers
// write through the status subresource; and the annotations in
// ignoredAnnotations. An annotations map left empty is dropped too.
func comparable(obj *unstructured.Unstructured) map[string]any {
	out := storedSecret(obj.DeepCopy())
	for _, f := range []string{"resourceVersion", "generation", "uid", "creationTimestamp", "managedFields"} {
		unstructured.RemoveNestedField(out.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(out.Object, "status")
	if annots := out.GetAnnotations(); annots != nil {
		for _, a := range ignoredAnnotations {
			delete(annots, a)
		}
		out.SetAnnotations(annots)
		if len(annots) == 0 {
			unstructured.RemoveNestedField(out.Object, "metadata", "annotations")
		}
	}
	data, err := json.Marshal(out.Object)
	if err != nil {
		panic(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		panic(err)
	}
	return m
}

var (
	typedConverter   = applyconfigurations.NewTypeConverter(scheme.Scheme)
	deducedConverter = managedfields.NewDeducedTypeConverter()
)

// fieldDiff compares two objects of one kind field by field, as
// structured-merge-diff sees them: lists with merge keys are sets there,
// so the order of their elements is not compared. Kinds without a schema
// (custom resources) are compared with the deduced, schema-less converter.
func fieldDiff(t *testing.T, from, to map[string]any) (added, removed, modified []string) {
	t.Helper()
	convert := func(tc managedfields.TypeConverter) (*typed.Comparison, error) {
		a, err := tc.ObjectToTyped(&unstructured.Unstructured{Object: from})
		if err != nil {
			return nil, err
		}
		b, err := tc.ObjectToTyped(&unstructured.Unstructured{Object: to})
		if err != nil {
			return nil, err
		}
		return a.Compare(b)
	}
	c, err := convert(typedConverter)
	if err != nil {
		if c, err = convert(deducedConverter); err != nil {
			t.Fatalf("comparing field sets: %v", err)
		}
	}
	return leaves(c.Added.Leaves()), leaves(c.Removed.Leaves()), leaves(c.Modified.Leaves())
}

func leaves(s *fieldpath.Set) []string {
	var out []string
	s.Iterate(func(p fieldpath.Path) { out = append(out, merge.Path(p).String()) })
	slices.Sort(out)
	return out
}

// diffObjects is cmp.Diff of the comparable forms.
func diffObjects(want, got *unstructured.Unstructured) string {
	return cmp.Diff(comparable(want), comparable(got))
}
