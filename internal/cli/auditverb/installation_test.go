package auditverb

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/clitest"
)

// TestAuditUsesTheInstalledChart: audit decides with the installed
// chart's configuration, as diff and explain do: its actions, and its
// ownership rules, which leave out the image that kubectl edit, the
// declared owner, changed; it says so on stderr, and without an
// installation falls back to the defaults with the same note.
func TestAuditUsesTheInstalledChart(t *testing.T) {
	connect := clitest.FakeCluster(t, "testdata/cluster/deployment-edited.yaml", "testdata/cluster/deployment-created.yaml", "testdata/chart/ownership.yaml")
	audit := []string{"-n", "shop", "-o", "json"}
	tests := map[string]struct {
		flags  []string
		code   int
		stderr string
		want   []string
	}{
		"the chart's actions and ownership rules": {
			code:   cli.ExitFailure,
			stderr: "using policy configuration from configmap apply-hygiene/apply-hygiene-config and no user policies\nerror: 1 finding(s) with the action deny\n",
			want:   []string{"missing-last-applied deny"},
		},
		"no installation in --hygiene-namespace: the defaults": {
			flags: []string{"--hygiene-namespace", "elsewhere"},
			code:  cli.ExitFailure,
			stderr: "using the default policy configuration and no user policies\n" +
				"note: no apply-hygiene ConfigMaps in namespace elsewhere; set --hygiene-namespace to where the chart is installed\n" +
				"error: 1 finding(s) with the action deny\n",
			want: []string{"missing-last-applied warn", "imperative-edit deny"},
		},
		"--policy-config replaces the chart's configuration": {
			flags:  []string{"--policy-config", "testdata/ownership/undo-manager.yaml"},
			code:   cli.ExitFailure,
			stderr: "using file testdata/ownership/undo-manager.yaml and no user policies\nerror: 1 finding(s) with the action deny\n",
			want:   []string{"missing-last-applied warn", "imperative-edit deny"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := run(t, connect, append(audit, tc.flags...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if diff := cmp.Diff(tc.stderr, stderr); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, clitest.RuleActions(t, stdout)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}
