package explain

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

// run runs explain with args against the cluster connect returns.
func run(t *testing.T, connect cluster.ConnectFunc, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return clitest.Run(t.Context(), func(s genericiooptions.IOStreams) *cobra.Command { return NewCmd(s, clitest.Analyzer, connect) }, args...)
}

// runOffline runs explain with args and no cluster.
func runOffline(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return run(t, clitest.FakeCluster(t), args...)
}

func TestExplainSeed004(t *testing.T) {
	stdout, stderr, code := runOffline(t, "--live", "testdata/seed004/live.yaml", "-o", "json")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Fields   []merge.FieldInfo `json:"fields"`
		Findings []judge.Finding   `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("decoding %q: %v", stdout, err)
	}
	// The audit's rules: the image that kubectl set is an imperative edit
	// of the stored object, which admission denied as such; the env var
	// the undo put back is an orphan.
	sts := merge.ObjectRef{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: "default", Name: "my-wonderhoy-app"}
	want := []judge.Finding{
		{Rule: "imperative-edit", Action: "deny", Path: "spec.template.spec.containers[name=nginx].image", Object: sts},
		{Rule: "orphaned-field", Action: "warn", Path: "spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]", Object: sts},
	}
	if diff := cmp.Diff(want, clitest.WithoutMessages(got.Findings)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	clitest.Golden(t, "testdata/seed004/explain.json", stdout, *update)
	text, _, _ := runOffline(t, "--live", "testdata/seed004/live.yaml")
	clitest.Golden(t, "testdata/seed004/explain.txt", text, *update)
}

func TestExplainBadInput(t *testing.T) {
	tests := map[string]struct {
		args    []string
		wantErr string
	}{
		"a document without kind is named": {
			args: []string{"--live", "testdata/bad/no-kind.yaml"}, wantErr: "testdata/bad/no-kind.yaml: document 2: missing kind",
		},
		"a file without objects is named": {
			args: []string{"--live", "testdata/bad/empty.yaml"}, wantErr: "testdata/bad/empty.yaml: no objects",
		},
		"explain needs an object": {
			wantErr: "name the object as KIND/NAME (read from the cluster) or give --live FILE",
		},
		"explain takes KIND/NAME or --live, not both": {
			args: []string{"statefulset/web", "--live", "testdata/seed004/live.yaml"}, wantErr: "not both",
		},
		"explain names one object": {
			args: []string{"statefulset/web/x", "-n", "default"}, wantErr: "name one object as KIND/NAME or KIND NAME",
		},
		"an unknown output format names the flag": {
			args: []string{"--live", "testdata/seed004/live.yaml", "-o", "table"}, wantErr: `--output must be "json" or "yaml"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runOffline(t, tc.args...)
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

// The object read from the cluster explains exactly as the same object
// read from a file.
func TestExplainFromCluster(t *testing.T) {
	connect := clitest.FakeCluster(t, "testdata/seed004/live.yaml")
	tests := map[string]struct {
		args   []string
		golden string
	}{
		"KIND/NAME with -n":     {args: []string{"statefulset/my-wonderhoy-app", "-n", "default"}, golden: "seed004/explain.txt"},
		"KIND NAME, short kind": {args: []string{"statefulsets.apps", "my-wonderhoy-app", "--namespace=default"}, golden: "seed004/explain.txt"},
		"-o json":               {args: []string{"statefulset/my-wonderhoy-app", "-n", "default", "-o", "json"}, golden: "seed004/explain.json"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := run(t, connect, tc.args...)
			if code != cli.ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			want, err := os.ReadFile(filepath.Join("testdata", tc.golden))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), stdout); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestExplainFromClusterErrors(t *testing.T) {
	connect := clitest.FakeCluster(t, "testdata/seed004/live.yaml")
	tests := map[string]struct {
		args    []string
		code    int
		wantErr string
	}{
		"an unknown kind is bad input": {
			args: []string{"widget/x", "-n", "default"}, code: cli.ExitBadInput, wantErr: `unknown kind "widget"`,
		},
		"a missing object fails": {
			args: []string{"statefulset/nope", "-n", "default"}, code: cli.ExitFailure, wantErr: `reading statefulset/nope: statefulsets.apps "nope" not found`,
		},
		"another namespace has no such object": {
			args: []string{"statefulset/my-wonderhoy-app", "-n", "shop"}, code: cli.ExitFailure, wantErr: "not found",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := run(t, connect, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.wantErr) || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, stdout, stderr, tc.code, tc.wantErr)
			}
		})
	}
}

// TestExplainUsesTheInstalledChart: connected, explain decides with the
// configuration and user policies of the chart's ConfigMaps, says so on
// stderr, and falls back to the defaults where there is no installation;
// --policy-config replaces the chart's configuration.
func TestExplainUsesTheInstalledChart(t *testing.T) {
	connect := clitest.FakeCluster(t, "testdata/seed004/live.yaml", "testdata/chart/configmaps.yaml")
	explain := []string{"statefulset/my-wonderhoy-app", "-n", "default", "-o", "json"}
	tests := map[string]struct {
		flags  []string
		stderr string
		want   []string
	}{
		"the chart's configuration and its two user policies": {
			stderr: "using policy configuration from configmap apply-hygiene/apply-hygiene-config and 2 user policies\n",
			want:   []string{"from-a-configmap warn", "from-the-chart warn", "imperative-edit deny", "orphaned-field deny"},
		},
		"no installation in --hygiene-namespace: the defaults": {
			flags:  []string{"--hygiene-namespace", "elsewhere"},
			stderr: "using the default policy configuration and no user policies\nnote: no apply-hygiene ConfigMaps in namespace elsewhere",
			want:   []string{"imperative-edit deny", "orphaned-field warn"},
		},
		"--policy-config replaces the chart's configuration, not its policies": {
			flags:  []string{"--policy-config", "testdata/chart/config.yaml"},
			stderr: "using file testdata/chart/config.yaml and 2 user policies\n",
			want:   []string{"from-a-configmap warn", "from-the-chart warn", "imperative-edit warn", "orphaned-field warn"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := run(t, connect, append(explain, tc.flags...)...)
			if code != cli.ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.HasPrefix(stderr, tc.stderr) {
				t.Errorf("stderr = %q, want it to start with %q", stderr, tc.stderr)
			}
			if diff := cmp.Diff(tc.want, clitest.RuleActions(t, stdout)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExplainOwnership: explain's field listing marks no drift or orphan
// at a field the ownership rules declare, as its findings, the server and
// the audit leave them out; a rule whose owner did not write the fields
// leaves them marked. Seed 004's undo changed the image and put back
// TO_BE_DELETED (field manager kubectl).
func TestExplainOwnership(t *testing.T) {
	const (
		image = "spec.template.spec.containers[name=nginx].image                           \"nginx:latest\"                               kubectl                     last-applied"
		name  = "spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED].name    \"TO_BE_DELETED\"                              kubectl                     "
		value = "spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED].value   \"needs to be deleted!\"                       kubectl                     "
	)
	declared := []string{image, name + "-", value + "-", "No findings."}
	tests := map[string]struct {
		config string
		want   []string
	}{
		"fields the cluster owns are neither drift nor orphans": {config: "cluster", want: declared},
		"fields owned by the undo's field manager are neither":  {config: "undo-manager", want: declared},
		"a Flux rule whose target names the object":             {config: "flux", want: declared},
		"fields owned by a manager that did not write them stay drift and orphans": {
			config: "other-manager", want: []string{image + ",drift", name + "orphan", value + "orphan", "DENY: [imperative-edit]", "WARN: [orphaned-field]"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			config := filepath.Join("testdata", "ownership", tc.config+".yaml")
			stdout, stderr, code := runOffline(t, "--live", "testdata/seed004/live.yaml", "--policy-config", config)
			if code != cli.ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if diff := cmp.Diff(tc.want, ownedLines(stdout)); diff != "" {
				t.Errorf("explain's lines of the undone fields and findings (-want +got):\n%s", diff)
			}
		})
	}
}

// ownedLines are explain's lines of the image and TO_BE_DELETED, and its
// findings up to their rule.
func ownedLines(stdout string) []string {
	var got []string
	for line := range strings.Lines(stdout) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "DENY: ") || strings.HasPrefix(line, "WARN: "):
			rule, _, _ := strings.Cut(line, "]")
			got = append(got, rule+"]")
		case line == "No findings.",
			strings.HasPrefix(line, "spec.template.spec.containers[name=nginx].image "),
			strings.Contains(line, "TO_BE_DELETED"):
			got = append(got, line)
		}
	}
	return got
}
