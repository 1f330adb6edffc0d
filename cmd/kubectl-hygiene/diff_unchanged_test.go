package main

import (
	"testing"

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
	runJSON(t, &diff, "diff", "--live", live, "-f", manifest, "-o", "json")
	var explain struct {
		Items []struct {
			Findings []judge.Finding `json:"findings"`
		} `json:"items"`
		Findings []judge.Finding `json:"findings"`
	}
	runJSON(t, &explain, "explain", "--live", live, "-o", "json")
	var deployment []judge.Finding
	for _, f := range explain.Findings {
		if f.Object.Kind == "Deployment" {
			deployment = append(deployment, f)
		}
	}
	if len(deployment) == 0 {
		t.Fatalf("explain finds nothing in the Deployment: %+v", explain.Findings)
	}
	if diff := cmp.Diff(deployment, diff.Kept); diff != "" {
		t.Errorf("diff's kept findings differ from explain's (-explain +diff):\n%s", diff)
	}
	if len(diff.Findings) != 0 {
		t.Errorf("diff's findings = %+v, want none: kubectl apply sends no request", diff.Findings)
	}

	text, _, code := runCmd(t, "diff", "--live", live, "-f", manifest)
	if code != 0 {
		t.Errorf("diff exited %d, want 0", code)
	}
	golden(t, "multi/diff-unchanged.txt", text)
}
