package review

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// savedConfig answers as decoding last-applied does (savedConfigDecoded)
// on every object of the captured reviews, and on last-applied that hold
// the object's uid plainly, escaped, or in bytes the decoder replaces.
func TestSavedConfigEqualsDecodingLastApplied(t *testing.T) {
	saved := func(uid, lastApplied string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "uid": uid, "annotations": map[string]any{lastAppliedAnnotation: lastApplied}},
		}}
	}
	const config = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","uid":%s,"annotations":{}}}`
	objects := map[string]*unstructured.Unstructured{
		"save-config with the uid":             saved("u-1", strings.Replace(config, "%s", `"u-1"`, 1)),
		"save-config with the uid escaped":     saved("u-1", strings.Replace(config, "%s", `"\u0075-1"`, 1)),
		"another uid":                          saved("u-1", strings.Replace(config, "%s", `"u-2"`, 1)),
		"the uid elsewhere, not as metadata's": saved("u-1", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u-1"}}`),
		"an object without uid":                saved("", strings.Replace(config, "%s", `""`, 1)),
		"a uid the decoder replaces":           saved("\uFFFD", strings.Replace(config, "%s", "\"\xff\"", 1)),
		"a uid with a quote":                   saved(`u"1`, strings.Replace(config, "%s", `"u\"1"`, 1)),
		"no last-applied":                      saved("u-1", ""),
		"last-applied not JSON":                saved("u-1", `{"metadata":{"uid":"u-1"`),
	}
	for _, dir := range []string{"../../webhook/testdata/reviews", "../../webhook/testdata/bench"} {
		names, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil || len(names) == 0 {
			t.Fatalf("no reviews in %s: %v", dir, err)
		}
		for _, name := range names {
			raw, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			var review struct {
				Request struct{ Object, OldObject map[string]any }
			}
			if err := json.Unmarshal(raw, &review); err != nil {
				t.Fatal(err)
			}
			for key, obj := range map[string]map[string]any{"object": review.Request.Object, "oldObject": review.Request.OldObject} {
				if obj != nil {
					objects[filepath.Base(name)+"/"+key] = &unstructured.Unstructured{Object: obj}
				}
			}
		}
	}
	held := 0
	for name, obj := range objects {
		t.Run(name, func(t *testing.T) {
			// The object before: no earlier record.
			before := obj.DeepCopy()
			before.SetAnnotations(nil)
			want := savedConfigDecoded(before, obj, lastApplied(obj))
			if got := savedConfig(before, obj); got != want {
				t.Errorf("savedConfig = %t, decoding last-applied says %t", got, want)
			}
			if want {
				held++
			}
		})
	}
	if held < 3 {
		t.Errorf("only %d objects are saved configs: the test compares too little", held)
	}
}
