package memory

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// editReview is a `kubectl edit` of Deployment web, as kube-apiserver sent
// it (see testdata/README.md).
//
//go:embed testdata/deployment-edit.json
var editReview []byte

const (
	lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
	// objectSize is the size each object of the large review grows to:
	// etcd's default request limit (--max-request-bytes, 1.5 MiB), the
	// largest object the API server can store.
	objectSize = 3 << 19
	// envValue is the length of each env entry's value.
	envValue = 100
)

// largeReview grows editReview into a review of two objects of about
// objectSize bytes each: the edited Deployment's container gets as many
// env entries as fit, in its spec and in its last-applied configuration
// (half each, so the analysis walks all of them), and the edit changes one
// entry's value. An admission webhook sees the object before the API
// server validates it, so the annotation may exceed the 256 KiB that
// validation would allow.
func largeReview(t testing.TB) []byte {
	t.Helper()
	var review map[string]any
	if err := json.Unmarshal(editReview, &review); err != nil {
		t.Fatalf("decoding the base review: %v", err)
	}
	// Each entry appears twice, in the spec and JSON-escaped in the
	// annotation: about 2×(envValue+40) bytes.
	n := objectSize / (2 * (envValue + 40))
	req := review["request"].(map[string]any)
	for key, edited := range map[string]bool{"object": true, "oldObject": false} {
		env := envEntries(n, edited)
		obj := req[key].(map[string]any)
		firstContainer(t, obj)["env"] = env
		setLastApplied(t, obj, envEntries(n, false))
	}
	raw, err := json.Marshal(review)
	if err != nil {
		t.Fatalf("encoding the large review: %v", err)
	}
	return raw
}

// envEntries are n env entries; edited changes the first one's value.
func envEntries(n int, edited bool) []any {
	env := make([]any, n)
	for i := range env {
		env[i] = map[string]any{"name": fmt.Sprintf("VAR_%05d", i), "value": strings.Repeat(string(rune('a'+i%26)), envValue)}
	}
	if edited {
		env[0].(map[string]any)["value"] = "edited"
	}
	return env
}

func firstContainer(t testing.TB, obj map[string]any) map[string]any {
	t.Helper()
	spec := obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	return spec["containers"].([]any)[0].(map[string]any)
}

// setLastApplied sets env on the first container of obj's last-applied
// configuration.
func setLastApplied(t testing.TB, obj map[string]any, env []any) {
	t.Helper()
	annotations := obj["metadata"].(map[string]any)["annotations"].(map[string]any)
	var la map[string]any
	if err := json.Unmarshal([]byte(annotations[lastAppliedAnnotation].(string)), &la); err != nil {
		t.Fatalf("decoding last-applied: %v", err)
	}
	firstContainer(t, la)["env"] = env
	raw, err := json.Marshal(la)
	if err != nil {
		t.Fatalf("encoding last-applied: %v", err)
	}
	annotations[lastAppliedAnnotation] = string(raw)
}

// The large review is what the tests claim: two objects of about 1.5 MiB,
// under the API server's 3 MiB request limit.
func TestLargeReviewSize(t *testing.T) {
	body := largeReview(t)
	var review struct {
		Request struct {
			Object, OldObject json.RawMessage
		}
	}
	if err := json.Unmarshal(body, &review); err != nil {
		t.Fatal(err)
	}
	for name, raw := range map[string]json.RawMessage{"object": review.Request.Object, "oldObject": review.Request.OldObject} {
		if len(raw) < objectSize*9/10 || len(raw) > objectSize {
			t.Errorf("%s is %d bytes, want 90–100 %% of %d", name, len(raw), objectSize)
		}
	}
	if len(body) > 3<<20 {
		t.Errorf("review is %d bytes, over the API server's 3 MiB", len(body))
	}
	t.Logf("review %d bytes, object %d, oldObject %d", len(body), len(review.Request.Object), len(review.Request.OldObject))
}
