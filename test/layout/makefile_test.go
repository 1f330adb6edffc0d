package layout

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMakeTargetsBuildOnlyTheirTools checks, with `make -n`, which pinned
// tools a target builds: a cold `make demo` pays for every tool it builds,
// so it builds only what the demo runs.
func TestMakeTargetsBuildOnlyTheirTools(t *testing.T) {
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skipf("no make on PATH: %v", err)
	}
	tests := map[string]struct {
		target string
		want   []string
	}{
		"the demo builds the control plane and helm": {
			target: "demo", want: []string{"hack/tools/build.sh etcd kube helm"},
		},
		"dev-up builds the control plane and helm": {
			target: "dev-up", want: []string{"hack/tools/build.sh etcd kube helm"},
		},
		"tools builds every tool": {
			target: "tools", want: []string{"hack/tools/build.sh etcd kube helm golangci-lint promtool"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), makeBin, "-n", "--no-print-directory", tc.target)
			cmd.Dir = "../.."
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("make -n %s: %v\n%s", tc.target, err, stderr.String())
			}
			var got []string
			for line := range strings.Lines(string(out)) {
				if i := strings.Index(line, "hack/tools/build.sh"); i >= 0 {
					got = append(got, strings.TrimSpace(strings.TrimSuffix(line[i:], ">/dev/null\n")))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("make -n %s: the tools it builds (-want +got):\n%s", tc.target, diff)
			}
		})
	}
}
