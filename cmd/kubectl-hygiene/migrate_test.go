package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/clitest"
)

// Flags that cannot go together, or a missing --server-side, are bad
// input (exit 2) named in one line.
func TestMigrateBadInput(t *testing.T) {
	connect := clitest.FakeCluster(t, "testdata/migrate/live.yaml")
	tests := map[string]struct {
		args []string
		want string
	}{
		"without --server-side": {
			args: []string{"migrate", "-n", "shop"},
			want: "error: say where to migrate to: --server-side (the only migration there is)",
		},
		"-A with TYPE/NAME": {
			args: []string{"migrate", "--server-side", "-A", "deployment/web"},
			want: "error: --all-namespaces (-A) lists objects; it does not go with TYPE/NAME or -f",
		},
		"--kind with -f": {
			args: []string{"migrate", "--server-side", "--kind", "cronjobs", "-f", "testdata/migrate/live.yaml"},
			want: "error: --kind lists objects; it does not go with TYPE/NAME or -f",
		},
		"a name without a type": {
			args: []string{"migrate", "--server-side", "web"},
			want: `error: argument "web": name objects as TYPE/NAME, e.g. deployment/web`,
		},
		"an empty field manager": {
			args: []string{"migrate", "--server-side", "--field-manager="},
			want: "error: --field-manager must not be empty",
		},
		"-o table": {
			args: []string{"migrate", "--server-side", "-o", "table"},
			want: `error: --output must be "json" or "yaml" (or empty for text), not "table"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runCluster(t, connect, tc.args...)
			if code != exitBadInput {
				t.Errorf("exit %d, want %d", code, exitBadInput)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if diff := cmp.Diff(tc.want+"\n", stderr); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}
