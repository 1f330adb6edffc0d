package diff

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/clitest"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// TestDiffPolicyFlags: diff decides with the server's engine, configured
// by --policy-config and extended by --policy-dir, and says on stderr
// which configuration and how many user policies it used.
func TestDiffPolicyFlags(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte("rules:\n  orphaned-field:\n    action: deny\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	policies := filepath.Join(dir, "policies")
	if err := os.Mkdir(policies, 0o700); err != nil {
		t.Fatal(err)
	}
	rego := `package applyhygiene.rules.no_latest

import data.applyhygiene.lib

decisions contains lib.decision_or("no-latest", "warn", "[no-latest] the image tag latest is live", ["spec.template.spec.containers[name=nginx].image"]) if {
	input.classification == "client-side-apply"
	some f in input.analysis.reverts
	f.live == "nginx:latest"
}
`
	if err := os.WriteFile(filepath.Join(policies, "no-latest.rego"), []byte(rego), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"--live", "testdata/seed004/live.yaml", "-f", "testdata/seed004/manifest-v3.yaml", "-o", "json"}
	tests := map[string]struct {
		flags  []string
		code   int
		want   []string
		stderr string
	}{
		"the defaults warn": {
			code: cli.ExitOK, want: []string{"apply-reverts-drift warn", "orphaned-field warn"},
			stderr: "using the default policy configuration and no user policies",
		},
		"a configuration turning orphaned-field to deny makes diff exit 1": {
			flags: []string{"--policy-config", config}, code: cli.ExitFailure,
			want:   []string{"apply-reverts-drift warn", "orphaned-field deny"},
			stderr: "using file " + config + " and no user policies",
		},
		"a user policy adds its decision": {
			flags: []string{"--policy-dir", policies}, code: cli.ExitOK,
			want:   []string{"apply-reverts-drift warn", "no-latest warn", "orphaned-field warn"},
			stderr: "using the default policy configuration and 1 user policy",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runOffline(t, append(base, tc.flags...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q does not say %q", stderr, tc.stderr)
			}
			if diff := cmp.Diff(tc.want, clitest.RuleActions(t, stdout)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDiffExamplePolicy: the user policy of docs/examples/no-image-revert
// changes diff's output: the apply that undoes kubectl set image (the
// captured review's old object and manifest) is denied, and diff exits 1.
func TestDiffExamplePolicy(t *testing.T) {
	req, _ := loadReview(t, filepath.Join(reviewsDir, "deployment-apply-reverts-drift.json"))
	dir := t.TempDir()
	live, manifest := filepath.Join(dir, "live.json"), filepath.Join(dir, "manifest.json")
	if err := os.WriteFile(live, req.OldObject.Raw, 0o600); err != nil {
		t.Fatal(err)
	}
	la := decode(t, req.Object.Raw).GetAnnotations()[merge.LastAppliedAnnotation]
	if err := os.WriteFile(manifest, []byte(la), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(code int, flags ...string) []string {
		t.Helper()
		stdout, stderr, got := runOffline(t, append([]string{"--live", live, "-f", manifest, "-o", "json"}, flags...)...)
		if got != code {
			t.Fatalf("exit %d, want %d: %s", got, code, stderr)
		}
		var out diffOutput
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		var rules []string
		for _, f := range out.Findings {
			rules = append(rules, string(f.Rule)+" "+f.Action+" "+f.Path)
		}
		return rules
	}
	const image = "spec.template.spec.containers[name=nginx].image"
	if diff := cmp.Diff([]string{"apply-reverts-drift warn " + image}, run(cli.ExitOK)); diff != "" {
		t.Errorf("without the policy (-want +got):\n%s", diff)
	}
	want := []string{"apply-reverts-drift warn " + image, "no-image-revert deny " + image}
	if diff := cmp.Diff(want, run(cli.ExitFailure, "--policy-dir", filepath.Join("..", "..", "..", "docs", "examples", "no-image-revert"))); diff != "" {
		t.Errorf("with docs/examples/no-image-revert (-want +got):\n%s", diff)
	}
}
