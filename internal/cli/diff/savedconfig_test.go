package diff

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A last-applied that kubectl replace and edit --save-config recorded
// whole holds the server's defaults (imagePullPolicy, hostPath's type,
// terminationMessagePath…); the apply of a manifest without them sends
// their deletion, the API server defaults them again, and its write
// changes last-applied alone: the real apply printed nothing, since the
// webhooks take such a write for kubectl apply edit-last-applied's
// hand-over. diff predicted the deletions as changes, reviewed the write
// as an apply and warned [orphaned-field] on the env var that kubectl set
// env added (the generative tests' seed 281168, sequence 004, step 18).
// Now its result is the object the API server stored, and it predicts
// what the apply printed.
func TestDiffOfAWholeSavedConfigPredictsTheStoredObject(t *testing.T) {
	stdout, stderr, code := runOffline(t, "--live", "testdata/savedconfig/live.json", "-f", "testdata/savedconfig/manifest.yaml", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got diffOutput
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Findings) != 0 {
		t.Errorf("findings %+v, want none: the apply printed none", got.Findings)
	}
	data, err := os.ReadFile("testdata/savedconfig/stored.json")
	if err != nil {
		t.Fatal(err)
	}
	var stored map[string]any
	if err := json.Unmarshal(data, &stored); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stored["spec"], got.Result["spec"]); diff != "" {
		t.Errorf("predicted spec (-stored +predicted):\n%s", diff)
	}
	metadata := func(obj map[string]any) map[string]any {
		m, _ := obj["metadata"].(map[string]any)
		return map[string]any{"labels": m["labels"], "annotations": m["annotations"]}
	}
	if diff := cmp.Diff(metadata(stored), metadata(got.Result)); diff != "" {
		t.Errorf("predicted labels and annotations (-stored +predicted):\n%s", diff)
	}
}
