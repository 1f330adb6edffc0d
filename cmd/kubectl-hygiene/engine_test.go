package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	base := []string{"diff", "--live", "testdata/seed004/live.yaml", "-f", "testdata/seed004/manifest-v3.yaml", "-o", "json"}
	tests := map[string]struct {
		flags  []string
		code   int
		want   []string
		stderr string
	}{
		"the defaults warn": {
			code: exitOK, want: []string{"apply-reverts-drift warn", "orphaned-field warn"},
			stderr: "using the default policy configuration and no user policies",
		},
		"a configuration turning orphaned-field to deny makes diff exit 1": {
			flags: []string{"--policy-config", config}, code: exitFailure,
			want:   []string{"apply-reverts-drift warn", "orphaned-field deny"},
			stderr: "using file " + config + " and no user policies",
		},
		"a user policy adds its decision": {
			flags: []string{"--policy-dir", policies}, code: exitOK,
			want:   []string{"apply-reverts-drift warn", "no-latest warn", "orphaned-field warn"},
			stderr: "using the default policy configuration and 1 user policy",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runCmd(t, append(base, tc.flags...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q does not say %q", stderr, tc.stderr)
			}
			var got diffOutput
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatal(err)
			}
			var rules []string
			for _, f := range got.Findings {
				rules = append(rules, f.Rule+" "+f.Action)
			}
			if diff := cmp.Diff(tc.want, rules); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}
