package diff

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
)

// TestDiffOwnership: diff drops the findings about fields that the
// configuration's ownership rules declare, as the server does, and refuses
// a configuration whose rules it cannot read (exit 2, the errors named).
// Seed 004's apply after the undo reverts the image and orphans an env var.
func TestDiffOwnership(t *testing.T) {
	const (
		image = "apply-reverts-drift warn spec.template.spec.containers[name=nginx].image"
		env   = "orphaned-field warn spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]"
	)
	tests := map[string]struct {
		config string
		code   int
		want   []string
		stderr string
	}{
		"fields the cluster owns on the selected objects are no findings": {config: "cluster"},
		"fields owned by the undo's field manager are no findings":        {config: "undo-manager"},
		"fields owned by a manager that did not write them stay findings": {config: "other-manager", want: []string{image, env}},
		"a Flux rule whose target selects other labels keeps them":        {config: "flux-other-labels", want: []string{image, env}},
		"a Flux rule whose target names the object drops them":            {config: "flux"},
		"a rule that cannot be read is refused": {
			config: "bad", code: cli.ExitBadInput,
			stderr: "error: validating --policy-config testdata/ownership/bad.yaml: [" +
				`ownership[0].paths[0]: Invalid value: "spec.template.spec.containers.0.image": parsing path "spec.template.spec.containers.0.image": invalid field name "0", ` +
				`ownership[0].kinds[0].kind: Invalid value: "statefulsets": a kind is written as the API's kind, e.g. Deployment (not the resource, deployments), or "*"]` + "\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			config := filepath.Join("testdata", "ownership", tc.config+".yaml")
			stdout, stderr, code := runOffline(t, "--live", "testdata/seed004/live.yaml", "-f", "testdata/seed004/manifest-v3.yaml", "-o", "json", "--policy-config", config)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			if tc.code == cli.ExitBadInput {
				if diff := cmp.Diff(tc.stderr, stderr); diff != "" {
					t.Errorf("stderr (-want +got):\n%s", diff)
				}
				return
			}
			if diff := cmp.Diff(tc.want, rulePaths(t, stdout)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// rulePaths decodes diff's -o json and lists "rule action path" per finding.
func rulePaths(t *testing.T, stdout string) []string {
	t.Helper()
	var out diffOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("decoding findings: %v\n%s", err, stdout)
	}
	var got []string
	for _, f := range out.Findings {
		got = append(got, string(f.Rule)+" "+f.Action+" "+f.Path)
	}
	return got
}
