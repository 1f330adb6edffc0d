package seeds_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// waitForRevisions waits until the StatefulSet controller has recorded n
// ControllerRevisions for the selector, which rollout undo reads.
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

// wantLines compares output with the expected lines exactly.
func wantLines(t *testing.T, output string, want ...string) {
	t.Helper()
	got := strings.Split(strings.TrimSuffix(output, "\n"), "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("output lines mismatch (-want +got):\n%s", diff)
	}
}

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

// jsonpath prints one jsonpath expression of object.
func jsonpath(t *testing.T, k framework.Kubectl, object, expr string) string {
	t.Helper()
	return k.Run(t, "get", object, "-o", "jsonpath="+expr).MustSucceed(t).Stdout
}
