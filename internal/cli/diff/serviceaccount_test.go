package diff

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/judge"
)

// The API server converts a pod spec's serviceAccount and
// serviceAccountName into one (serviceAccountName wins when both are
// set) before admission sees the object: a manifest that still writes
// serviceAccount puts nothing back over a name kubectl set serviceaccount
// set, and diff predicts no revert of it (review leftover B2).
func TestDiffConvertsServiceAccount(t *testing.T) {
	var diff struct {
		Findings []judge.Finding `json:"findings"`
	}
	runJSON(t, &diff, "--live", "testdata/serviceaccount/live.yaml", "-f", "testdata/serviceaccount/manifest.yaml", "-o", "json")
	if diff := cmp.Diff([]judge.Finding{}, diff.Findings); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}
