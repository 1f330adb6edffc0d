package merge

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FuzzAnalyzeApply feeds random live objects, manifests and last-applied
// values to every entry point; none may panic. The seed corpus is in
// testdata/fuzz/FuzzAnalyzeApply (inputs the fuzzer found interesting). To
// look for more: go test ./merge -run '^$' -fuzz FuzzAnalyzeApply
// -fuzzminimizetime 200x (minimizing large inputs is slow without the cap).
func FuzzAnalyzeApply(f *testing.F) {
	for _, dir := range []string{"seed004-undo", "seed003-restarted-at", "crd-json-merge", "statefulset-ondelete"} {
		live, _ := testdata.ReadFile("testdata/" + dir + "/live.yaml")
		manifest, _ := testdata.ReadFile("testdata/" + dir + "/modified.yaml")
		original, _ := testdata.ReadFile("testdata/" + dir + "/original.yaml")
		f.Add(yamlToJSON(f, live), yamlToJSON(f, manifest), string(yamlToJSON(f, original)))
	}
	a := NewAnalyzer()
	f.Fuzz(func(_ *testing.T, liveJSON, manifestJSON []byte, lastApplied string) {
		live, ok := decodeObject(liveJSON)
		if !ok {
			return
		}
		manifest, ok := decodeObject(manifestJSON)
		if !ok {
			return
		}
		if lastApplied != "" {
			if meta, ok := live.Object["metadata"].(map[string]any); ok {
				annots, _ := meta["annotations"].(map[string]any)
				if annots == nil {
					annots = map[string]any{}
					meta["annotations"] = annots
				}
				annots[LastAppliedAnnotation] = lastApplied
			}
		}
		_, _, _ = a.predictApply(live, manifest)
		_, _ = a.AnalyzeUpdate(live, manifest)
		_, _ = a.Explain(live)
		_, _ = a.DetectRollback(live, manifest, []*unstructured.Unstructured{manifest, live})
		_, _ = ParsePath(lastApplied)
	})
}

func decodeObject(data []byte) (*unstructured.Unstructured, bool) {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		return nil, false
	}
	return &unstructured.Unstructured{Object: m}, true
}

func yamlToJSON(f *testing.F, data []byte) []byte {
	f.Helper()
	obj := mustYAML(f, data)
	out, err := json.Marshal(obj.Object)
	if err != nil {
		f.Fatal(err)
	}
	return out
}
