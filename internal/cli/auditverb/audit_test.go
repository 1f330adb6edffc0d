package auditverb

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/clitest"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/judge"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// run runs audit with args against the cluster connect returns.
func run(t *testing.T, connect cluster.ConnectFunc, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return clitest.Run(t.Context(), func(s genericiooptions.IOStreams) *cobra.Command { return NewCmd(s, clitest.Analyzer, connect) }, args...)
}

type auditOutput struct {
	Findings []judge.Finding `json:"findings"`
}

func TestAudit(t *testing.T) {
	connect := clitest.FakeCluster(t, "testdata/cluster/deployment-edited.yaml", "testdata/cluster/deployment-created.yaml",
		"testdata/seed004/live.yaml", "testdata/seed004/controllerrevisions.yaml")
	web := merge.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	made := merge.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "made"}
	sts := merge.ObjectRef{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: "default", Name: "my-wonderhoy-app"}
	edit := judge.Finding{Rule: "imperative-edit", Action: "deny", Path: "spec.template.spec.containers[name=nginx].image", Object: web}
	missing := judge.Finding{Rule: "missing-last-applied", Action: "warn", Path: judge.LastAppliedPath, Object: made}
	stale := judge.Finding{Rule: "stale-last-applied", Action: "repair", Path: judge.LastAppliedPath, Object: sts}
	warnEdits := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(warnEdits, []byte("rules:\n  imperative-edit:\n    action: warn\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		args []string
		code int
		want []judge.Finding
	}{
		"every namespace; a deny exits 1": {
			args: []string{"-A", "-o", "json"}, code: cli.ExitFailure, want: []judge.Finding{stale, missing, edit},
		},
		"one namespace": {
			args: []string{"-n", "default", "-o", "json"}, code: cli.ExitOK, want: []judge.Finding{stale},
		},
		"the policy configuration sets the actions": {
			args: []string{"-n", "shop", "-o", "json", "--policy-config", warnEdits}, code: cli.ExitOK,
			want: []judge.Finding{missing, {Rule: edit.Rule, Action: "warn", Path: edit.Path, Object: web}},
		},
		"--kind adds kinds": {
			args: []string{"-n", "shop", "-o", "json", "--kind", "configmaps,deployment"}, code: cli.ExitFailure, want: []judge.Finding{missing, edit},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := run(t, connect, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, stderr)
			}
			var got auditOutput
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("decoding %q: %v", stdout, err)
			}
			if diff := cmp.Diff(tc.want, clitest.WithoutMessages(got.Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			for _, f := range got.Findings {
				if !strings.HasPrefix(f.Message, "["+string(f.Rule)+"] "+f.Object.Kind+" "+f.Object.Namespace+"/"+f.Object.Name+": ") {
					t.Errorf("message %q", f.Message)
				}
			}
		})
	}
}

func TestAuditTableAndProgress(t *testing.T) {
	connect := clitest.FakeCluster(t, "testdata/cluster/deployment-edited.yaml")
	stdout, stderr, code := run(t, connect, "-n", "shop", "--progress")
	if code != cli.ExitFailure {
		t.Errorf("exit %d, want %d", code, cli.ExitFailure)
	}
	lines := strings.Split(stdout, "\n")
	wantHead := []string{
		"NAMESPACE   OBJECT           RULE              ACTION   PATH",
		"shop        Deployment/web   imperative-edit   deny     spec.template.spec.containers[name=nginx].image",
		"",
	}
	if diff := cmp.Diff(wantHead, lines[:3]); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(lines[3], "[imperative-edit] Deployment shop/web: ") {
		t.Errorf("message line %q", lines[3])
	}
	wantErr := clitest.NoInstallation + "scanned 1 objects (listing deployments.apps), 1 findings\n" +
		"scanned 1 objects (listing statefulsets.apps), 1 findings\n" +
		"scanned 1 objects (listing daemonsets.apps), 1 findings\n" +
		"error: 1 finding(s) with the action deny\n"
	if diff := cmp.Diff(wantErr, stderr); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
}

func TestAuditNoFindings(t *testing.T) {
	stdout, stderr, code := run(t, clitest.FakeCluster(t, "testdata/seed004/live.yaml"), "-n", "shop")
	if code != cli.ExitOK || stdout != "No findings in 0 objects.\n" || stderr != clitest.NoInstallation {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestAuditBadKindAndConfig(t *testing.T) {
	connect := clitest.FakeCluster(t)
	bad := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(bad, []byte("rules:\n  imperative-edit:\n    action: shout\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		args    []string
		wantErr string
	}{
		"an unknown kind":          {args: []string{"-A", "--kind", "widgets"}, wantErr: `unknown kind "widgets"`},
		"an invalid configuration": {args: []string{"-A", "--policy-config", bad}, wantErr: "validating --policy-config " + bad + `: rules[imperative-edit].action: Unsupported value: "shout"`},
		"a missing configuration":  {args: []string{"-A", "--policy-config", "testdata/nope.yaml"}, wantErr: "reading --policy-config"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, stderr, code := run(t, connect, tc.args...)
			if code != cli.ExitBadInput || !strings.Contains(stderr, tc.wantErr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, cli.ExitBadInput, tc.wantErr)
			}
		})
	}
}

func TestAuditBadInput(t *testing.T) {
	tests := map[string]struct {
		args    []string
		wantErr string
	}{

		"audit -A and -n exclude each other": {
			args: []string{"-A", "-n", "shop"}, wantErr: "--all-namespaces (-A) and --namespace (-n) exclude each other",
		},
		"audit output is table, json or yaml": {
			args: []string{"-n", "shop", "-o", "wide"}, wantErr: `--output must be "table", "json" or "yaml", not "wide"`,
		},
		"audit takes no arguments": {
			args: []string{"deployments"}, wantErr: `unexpected argument "deployments"`,
		},
		"audit chunk size is positive": {
			args: []string{"-n", "shop", "--chunk-size", "0"}, wantErr: "--chunk-size must be positive",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := run(t, clitest.FakeCluster(t), tc.args...)
			if code != cli.ExitBadInput {
				t.Errorf("exit %d, want %d; stderr %q", code, cli.ExitBadInput, stderr)
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
