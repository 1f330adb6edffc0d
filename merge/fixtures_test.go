package merge

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// testdata holds the fixtures: testdata/<case>/{original,modified,live,
// expected}.yaml, where original is the last-applied manifest (the test
// writes it into live's annotation unless live has one; no file means no
// annotation), modified
// the new manifest, live the live object and expected the object after the
// apply without its last-applied annotation. analysis.json is a golden file
// written by `go test ./merge -update`. Each fixture says where it came from.
//
//go:embed testdata
var testdata embed.FS

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixture is one loaded test case.
type fixture struct {
	dir                      string
	original, modified, live *unstructured.Unstructured
	expected                 *unstructured.Unstructured
}

func loadFixture(t *testing.T, dir string) fixture {
	t.Helper()
	f := fixture{
		dir:      dir,
		original: readObject(t, dir, "original.yaml"),
		modified: readObject(t, dir, "modified.yaml"),
		live:     readObject(t, dir, "live.yaml"),
		expected: readObject(t, dir, "expected.yaml"),
	}
	if f.original != nil && f.live != nil && f.live.GetAnnotations()[LastAppliedAnnotation] == "" {
		setLastApplied(t, f.live, f.original)
	}
	return f
}

func readObject(t *testing.T, dir, name string) *unstructured.Unstructured {
	t.Helper()
	data, err := testdata.ReadFile("testdata/" + dir + "/" + name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return mustYAML(t, data)
}

func mustYAML(t testing.TB, data []byte) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatalf("decoding YAML: %v", err)
	}
	return &unstructured.Unstructured{Object: m}
}

// setLastApplied writes manifest into obj's annotation as kubectl does.
func setLastApplied(t testing.TB, obj, manifest *unstructured.Unstructured) {
	t.Helper()
	value, err := LastAppliedValue(manifest)
	if err != nil {
		t.Fatal(err)
	}
	annots := obj.GetAnnotations()
	if annots == nil {
		annots = map[string]string{}
	}
	annots[LastAppliedAnnotation] = value
	obj.SetAnnotations(annots)
}

// withoutAnnotation returns obj without its last-applied annotation (and
// without an annotations map left empty).
func withoutAnnotation(obj *unstructured.Unstructured) map[string]any {
	out := obj.DeepCopy()
	out.SetManagedFields(nil)
	annots := out.GetAnnotations()
	delete(annots, LastAppliedAnnotation)
	if len(annots) == 0 {
		unstructured.RemoveNestedField(out.Object, "metadata", "annotations")
	} else {
		out.SetAnnotations(annots)
	}
	return roundTrip(out.Object)
}

// roundTrip normalizes numbers through JSON.
func roundTrip(v any) map[string]any {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		panic(err)
	}
	return m
}

// golden compares got with testdata/<dir>/<name>, rewriting it with -update.
func golden(t *testing.T, dir, name string, got any) {
	t.Helper()
	data, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, '\n')
	path := filepath.Join("testdata", dir, name)
	if *update {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := testdata.ReadFile("testdata/" + dir + "/" + name)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update): %v", err)
	}
	if string(want) != string(data) {
		t.Errorf("%s differs from the golden file (run go test -update and review the diff):\n%s", path, diffLines(string(want), string(data)))
	}
}

func bufioReader(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }

// fixtureTime is the time of the managedFields entries withOwner adds.
var fixtureTime = time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)

// withOwner adds to obj a managedFields entry of manager (an Update) owning
// fieldsV1, as the API server records it for a write by that manager.
func withOwner(t testing.TB, obj *unstructured.Unstructured, manager, fieldsV1 string) {
	t.Helper()
	var fields map[string]any
	if err := json.Unmarshal([]byte(fieldsV1), &fields); err != nil {
		t.Fatalf("decoding fieldsV1: %v", err)
	}
	meta := obj.Object["metadata"].(map[string]any)
	entries, _ := meta["managedFields"].([]any)
	meta["managedFields"] = append(entries, map[string]any{"manager": manager, "operation": "Update",
		"apiVersion": obj.GetAPIVersion(), "time": fixtureTime.Format(time.RFC3339), "fieldsType": "FieldsV1", "fieldsV1": fields})
}
