package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/judge"
	"github.com/apply-hygiene/apply-hygiene/merge"
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

type diffOutput struct {
	Patch    json.RawMessage `json:"patch"`
	Result   map[string]any  `json:"result"`
	Findings []judge.Finding `json:"findings"`
}

// withoutMessages keeps what the tests pin exactly; messages and their
// commands are in goldens.
func withoutMessages(fs []judge.Finding) []judge.Finding {
	out := []judge.Finding{}
	for _, f := range fs {
		f.Message, f.Fix = "", ""
		out = append(out, f)
	}
	return out
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
	stdout, stderr, code := runCmd(t, args...)
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
	stdout := runJSON(t, &got, "diff", "--live", "testdata/seed004/live.yaml", "-f", "testdata/seed004/manifest-v3.yaml", "-o", "json")
	if diff := cmp.Diff(seed004Findings, withoutMessages(got.Findings)); diff != "" {
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
	stdout, _, code := runCmd(t, "diff", "--live", "testdata/seed004/live.yaml", "-f", "testdata/seed004/manifest-v3.yaml")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	golden(t, "seed004/diff.txt", stdout)
}

func TestDiffManyDocuments(t *testing.T) {
	stdout, stderr, code := runCmd(t, "diff", "--live", "testdata/multi/live.yaml", "-f", "testdata/multi/manifest.yaml", "-o", "json")
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
	if diff := cmp.Diff(want, withoutMessages(got.Findings)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

func TestDiffSecretIsRedacted(t *testing.T) {
	stdout, stderr, code := runCmd(t, "diff", "--live", "testdata/multi/live.yaml", "-f", "testdata/multi/secret.yaml", "-o", "json")
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

func TestBadInput(t *testing.T) {
	live, manifest := "testdata/seed004/live.yaml", "testdata/seed004/manifest-v3.yaml"
	tests := map[string]struct {
		args    []string
		wantErr string
	}{
		"diff without -f names the flag": {
			args: []string{"diff", "--live", live}, wantErr: "name the manifests with -f/--filename or -k/--kustomize",
		},
		"diff takes -f or -k, not both": {
			args: []string{"diff", "-f", manifest, "-k", "testdata"}, wantErr: "-f/--filename and -k/--kustomize exclude each other",
		},
		"a missing file is named": {
			args: []string{"diff", "-f", "testdata/nope.yaml", "--live", live}, wantErr: "reading testdata/nope.yaml",
		},
		"YAML that does not parse names the file and document": {
			args: []string{"diff", "-f", "testdata/bad/not-yaml.yaml", "--live", live}, wantErr: "testdata/bad/not-yaml.yaml: document 1",
		},

		"an unknown output format names the flag": {
			args: []string{"diff", "-f", manifest, "--live", live, "-o", "table"}, wantErr: `--output must be "json" or "yaml"`,
		},
		"an unknown flag": {
			args: []string{"diff", "--bogus"}, wantErr: "unknown flag: --bogus",
		},

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
		"both files from stdin": {
			args: []string{"diff", "-f", "-", "--live", "-"}, wantErr: "cannot both read stdin",
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

func TestAmbiguousNamespace(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "m.yaml")
	if err := os.WriteFile(manifest, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCmd(t, "diff", "-f", manifest, "--live", "testdata/bad/two-namespaces.yaml")
	if code != exitBadInput || !strings.Contains(stderr, "set metadata.namespace") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestStdin(t *testing.T) {
	data, err := os.ReadFile("testdata/seed004/manifest-v3.yaml")
	if err != nil {
		t.Fatal(err)
	}
	streams, in, out, _ := genericiooptions.NewTestIOStreams()
	in.Write(data)
	if code := run(t.Context(), streams, []string{"diff", "-f", "-", "--live", "testdata/seed004/live.yaml", "-o", "yaml"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !bytes.Contains(out.Bytes(), []byte("rule: orphaned-field")) {
		t.Errorf("YAML output lacks the orphan:\n%s", out)
	}
}
