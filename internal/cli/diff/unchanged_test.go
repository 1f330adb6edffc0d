package diff

import (
	"encoding/json"

	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/clitest"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/explain"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/judge"
)

// A manifest that is the live object's last-applied: kubectl apply sends
// no request, so the webhooks say nothing (no findings, exit 0), and diff
// lists under "kept" what stays in the object: exactly what explain finds
// in it, the orphaned restartedAt of seed 003, message included.
func TestDiffOfAnUnchangedManifestListsWhatStays(t *testing.T) {
	const live, manifest = "testdata/multi/live.yaml", "testdata/multi/manifest-unchanged.yaml"
	var diff struct {
		Findings []judge.Finding `json:"findings"`
		Kept     []judge.Finding `json:"kept"`
	}
	runJSON(t, &diff, "--live", live, "-f", manifest, "-o", "json")
	var explained struct {
		Items []struct {
			Findings []judge.Finding `json:"findings"`
		} `json:"items"`
		Findings []judge.Finding `json:"findings"`
	}
	stdout, stderr, exit := clitest.Run(t.Context(), func(s genericiooptions.IOStreams) *cobra.Command {
		return explain.NewCmd(s, clitest.Analyzer, clitest.FakeCluster(t))
	}, "--live", live, "-o", "json")
	if exit != 0 {
		t.Fatalf("explain exited %d: %s", exit, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), &explained); err != nil {
		t.Fatal(err)
	}
	var deployment []judge.Finding
	for _, f := range explained.Findings {
		if f.Object.Kind == "Deployment" {
			deployment = append(deployment, f)
		}
	}
	if len(deployment) == 0 {
		t.Fatalf("explain finds nothing in the Deployment: %+v", explained.Findings)
	}
	if diff := cmp.Diff(deployment, diff.Kept); diff != "" {
		t.Errorf("diff's kept findings differ from explain's (-explain +diff):\n%s", diff)
	}
	if len(diff.Findings) != 0 {
		t.Errorf("diff's findings = %+v, want none: kubectl apply sends no request", diff.Findings)
	}

	text, _, code := runOffline(t, "--live", live, "-f", manifest)
	if code != 0 {
		t.Errorf("diff exited %d, want 0", code)
	}
	golden(t, "multi/diff-unchanged.txt", text)
}
