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

// A manifest that drops spec.replicas from last-applied: kubectl apply
// deletes it, and the API server defaults it again to 1. At 1, the write
// changes last-applied alone, as kubectl apply edit-last-applied's
// hand-over of a field does, and the webhooks, which cannot tell the two
// apart, say nothing of it (generative seed 281154, sequence 007): diff
// says what they say. At 3, the count changes (replicas-reset denies it),
// and the apply's orphan is reported.
func TestDiffOfADroppedDefault(t *testing.T) {
	tests := map[string]struct {
		live string
		want []string
	}{
		"at the default": {live: "testdata/defaulted/live-1.yaml"},
		"at another count": {live: "testdata/defaulted/live-3.yaml", want: []string{
			"orphaned-field spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]",
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var diff struct {
				Findings []judge.Finding `json:"findings"`
			}
			// At 3 the apply resets the count, which is denied: exit 1.
			stdout, stderr, _ := runOffline(t, "--live", tc.live, "-f", "testdata/defaulted/manifest.yaml", "-o", "json")
			if err := json.Unmarshal([]byte(stdout), &diff); err != nil {
				t.Fatalf("decoding %q: %v (%s)", stdout, err, stderr)
			}
			var got []string
			for _, f := range diff.Findings {
				if f.Rule == "orphaned-field" {
					got = append(got, string(f.Rule)+" "+f.Path)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("orphaned-field findings (-want +got):\n%s", diff)
			}
		})
	}
}
