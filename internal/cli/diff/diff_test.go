package diff

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

// newCmd builds diff against the cluster connect returns.
func newCmd(connect cluster.ConnectFunc) clitest.NewCmdFunc {
	return func(s genericiooptions.IOStreams) *cobra.Command { return NewCmd(s, clitest.Analyzer, connect) }
}

// runOffline runs diff with args and no cluster.
func runOffline(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return clitest.Run(t.Context(), newCmd(clitest.FakeCluster(t)), args...)
}

// execute runs diff with args on streams against the cluster connect
// returns, and returns the exit status.
func execute(t *testing.T, streams genericiooptions.IOStreams, args []string, connect cluster.ConnectFunc) int {
	t.Helper()
	return cli.Execute(t.Context(), NewCmd(streams, clitest.Analyzer, connect), streams.ErrOut, args)
}

// golden compares got with testdata/<name>, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	clitest.Golden(t, filepath.Join("testdata", name), got, *update)
}

type diffOutput struct {
	Patch    json.RawMessage `json:"patch"`
	Result   map[string]any  `json:"result"`
	Findings []judge.Finding `json:"findings"`
}

// seed004Findings are what diff finds in seed 004's StatefulSet when v3 is
// applied (messages aside).
var seed004Findings = func() []judge.Finding {
	sts := merge.ObjectRef{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: "default", Name: "my-wonderhoy-app"}
	return []judge.Finding{
		{Rule: "apply-reverts-drift", Action: "warn", Path: "spec.template.spec.containers[name=nginx].image", Object: sts},
		{Rule: "orphaned-field", Action: "warn", Path: "spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]", Object: sts},
	}
}()

// runJSON runs the command, which must exit 0, decodes its standard
// output into out and returns it.
func runJSON(t *testing.T, out any, args ...string) string {
	t.Helper()
	stdout, stderr, code := runOffline(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), out); err != nil {
		t.Fatalf("decoding %q: %v", stdout, err)
	}
	return stdout
}

func TestDiffSeed004(t *testing.T) {
	var got diffOutput
	stdout := runJSON(t, &got, "--live", "testdata/seed004/live.yaml", "-f", "testdata/seed004/manifest-v3.yaml", "-o", "json")
	if diff := cmp.Diff(seed004Findings, clitest.WithoutMessages(got.Findings)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	for _, f := range got.Findings {
		if strings.Contains(f.Path, "ANOTHER_ENV") {
			t.Errorf("finding for ANOTHER_ENV: %+v", f)
		}
	}
	env := got.Result["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["env"]
	if len(env.([]any)) != 2 {
		t.Errorf("result env = %v, want TO_BE_DELETED kept next to ANOTHER_ENV", env)
	}
	golden(t, "seed004/diff.json", stdout)
}

func TestDiffText(t *testing.T) {
	stdout, _, code := runOffline(t, "--live", "testdata/seed004/live.yaml", "-f", "testdata/seed004/manifest-v3.yaml")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	golden(t, "seed004/diff.txt", stdout)
}

func TestDiffManyDocuments(t *testing.T) {
	stdout, stderr, code := runOffline(t, "--live", "testdata/multi/live.yaml", "-f", "testdata/multi/manifest.yaml", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Items []struct {
			Object  merge.ObjectRef `json:"object"`
			Created bool            `json:"created"`
		} `json:"items"`
		Findings []judge.Finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != 2 || got.Items[0].Created || !got.Items[1].Created || got.Items[1].Object.Kind != "ConfigMap" {
		t.Errorf("items = %+v, want the Deployment patched and the ConfigMap created", got.Items)
	}
	dep := merge.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx-deployment"}
	want := []judge.Finding{{Rule: "orphaned-field", Action: "warn", Path: "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]",
		Object: dep}}
	if diff := cmp.Diff(want, clitest.WithoutMessages(got.Findings)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

func TestDiffSecretIsRedacted(t *testing.T) {
	stdout, stderr, code := runOffline(t, "--live", "testdata/multi/live.yaml", "-f", "testdata/multi/secret.yaml", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, secret := range []string{"aHVudGVyMg==", "c3dvcmRmaXNo", "hunter2", "swordfish"} {
		if strings.Contains(stdout, secret) {
			t.Errorf("output shows secret value %q:\n%s", secret, stdout)
		}
	}
	var got diffOutput
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	rules := []string{}
	for _, f := range got.Findings {
		rules = append(rules, string(f.Rule)+" "+f.Path)
	}
	if diff := cmp.Diff([]string{"apply-reverts-drift data.password", "missing-last-applied " + judge.LastAppliedPath}, rules); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

func TestDiffBadInput(t *testing.T) {
	live, manifest := "testdata/seed004/live.yaml", "testdata/seed004/manifest-v3.yaml"
	tests := map[string]struct {
		args    []string
		wantErr string
	}{
		"diff without -f names the flag": {
			args: []string{"--live", live}, wantErr: "name the manifests with -f/--filename or -k/--kustomize",
		},
		"diff takes -f or -k, not both": {
			args: []string{"-f", manifest, "-k", "testdata"}, wantErr: "-f/--filename and -k/--kustomize exclude each other",
		},
		"a missing file is named": {
			args: []string{"-f", "testdata/nope.yaml", "--live", live}, wantErr: "reading testdata/nope.yaml",
		},
		"YAML that does not parse names the file and document": {
			args: []string{"-f", "testdata/bad/not-yaml.yaml", "--live", live}, wantErr: "testdata/bad/not-yaml.yaml: document 1",
		},

		"an unknown output format names the flag": {
			args: []string{"-f", manifest, "--live", live, "-o", "table"}, wantErr: `--output must be "json" or "yaml"`,
		},
		"an unknown flag": {
			args: []string{"--bogus"}, wantErr: "unknown flag: --bogus",
		},

		"both files from stdin": {
			args: []string{"-f", "-", "--live", "-"}, wantErr: "cannot both read stdin",
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

func TestAmbiguousNamespace(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "m.yaml")
	if err := os.WriteFile(manifest, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runOffline(t, "-f", manifest, "--live", "testdata/bad/two-namespaces.yaml")
	if code != cli.ExitBadInput || !strings.Contains(stderr, "set metadata.namespace") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestStdin(t *testing.T) {
	data, err := os.ReadFile("testdata/seed004/manifest-v3.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := clitest.RunIn(t.Context(), data, newCmd(clitest.FakeCluster(t)), "-f", "-", "--live", "testdata/seed004/live.yaml", "-o", "yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "rule: orphaned-field") {
		t.Errorf("YAML output lacks the orphan:\n%s", out)
	}
}
