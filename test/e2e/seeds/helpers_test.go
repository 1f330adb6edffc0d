package seeds_test

import (
	"encoding/json"
	"os"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// manifest reads a YAML test manifest as a generic object.
func manifest(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	return obj
}

// lastApplied returns what `kubectl apply view-last-applied` prints, decoded.
func lastApplied(t *testing.T, k framework.Kubectl, object string) map[string]any {
	t.Helper()
	out := k.Run(t, "apply", "view-last-applied", object, "-o", "json").MustSucceed(t).Stdout
	var obj map[string]any
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("decoding last-applied of %s: %v", object, err)
	}
	return obj
}
