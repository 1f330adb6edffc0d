package diff

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDiffCapturedSeed004 is the must-show of seed 004 on the StatefulSet
// as a real API server stored it after `kubectl rollout undo` (captured by
// test/e2e/merge, see test/e2e/merge/testdata/README.md): applying v3 leaves
// TO_BE_DELETED behind, an orphaned-field set by kubectl (the undo sends
// no field manager), and ANOTHER_ENV, which v3 keeps, is no finding.
func TestDiffCapturedSeed004(t *testing.T) {
	const live = "testdata/seed004/live.yaml"
	data, err := os.ReadFile(live)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "# Captured from a real API server") {
		t.Fatalf("%s is not the captured fixture; regenerate it with test/e2e/merge -capture", live)
	}
	stdout, stderr, code := runOffline(t, "--live", live, "-f", "testdata/seed004/manifest-v3.yaml", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got diffOutput
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	var orphans []string
	for _, f := range got.Findings {
		if f.Rule == "orphaned-field" {
			orphans = append(orphans, f.Path)
			if !strings.Contains(f.Message, "set by kubectl") {
				t.Errorf("the orphan's message does not name kubectl as who set it: %s", f.Message)
			}
		}
		if strings.Contains(f.Path, "ANOTHER_ENV") {
			t.Errorf("finding for ANOTHER_ENV: %+v", f)
		}
	}
	want := []string{"spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]"}
	if diff := cmp.Diff(want, orphans); diff != "" {
		t.Errorf("orphaned-field findings (-want +got):\n%s", diff)
	}
}
