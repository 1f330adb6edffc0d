package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// runCmd runs the command line in-process, as main does.
func runCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	code = run(t.Context(), streams, args)
	return out.String(), errOut.String(), code
}

// golden compares got with testdata/<name>, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

func TestAuditBadInput(t *testing.T) {
	tests := map[string]struct {
		args    []string
		wantErr string
	}{

		"audit -A and -n exclude each other": {
			args: []string{"audit", "-A", "-n", "shop"}, wantErr: "--all-namespaces (-A) and --namespace (-n) exclude each other",
		},
		"audit output is table, json or yaml": {
			args: []string{"audit", "-n", "shop", "-o", "wide"}, wantErr: `--output must be "table", "json" or "yaml", not "wide"`,
		},
		"audit takes no arguments": {
			args: []string{"audit", "deployments"}, wantErr: `unexpected argument "deployments"`,
		},
		"audit chunk size is positive": {
			args: []string{"audit", "-n", "shop", "--chunk-size", "0"}, wantErr: "--chunk-size must be positive",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runCmd(t, tc.args...)
			if code != exitBadInput {
				t.Errorf("exit %d, want %d; stderr %q", code, exitBadInput, stderr)
			}
			if !strings.Contains(stderr, tc.wantErr) || !strings.HasPrefix(stderr, "error: ") {
				t.Errorf("stderr %q does not say %q", stderr, tc.wantErr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}
}
