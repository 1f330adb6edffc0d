package testverb

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/clitest"
)

const examples = "../../../docs/examples"

// run runs kubectl hygiene test with args.
func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return clitest.Run(t.Context(), func(s genericiooptions.IOStreams) *cobra.Command { return NewCmd(s, clitest.Analyzer) }, args...)
}

func TestTestPassesOnTheExamples(t *testing.T) {
	stdout, stderr, code := run(t, examples)
	if code != cli.ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	if !regexp.MustCompile(`^[1-9][0-9]* passed, 0 failed\n$`).MatchString(stdout) {
		t.Errorf("stdout = %q, want only the summary line", stdout)
	}
}

// copyDir copies the files of dir (one level of subdirectories) to a
// temporary directory.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(out, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(out, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTestFailsWithDiffOnChangedExpectation(t *testing.T) {
	tests := map[string]struct {
		old, new string
		// minus and plus are in a removed and an added line of the diff.
		minus, plus string
	}{
		"another action": {
			old:   "      - rule: no-edit-in-prod\n        action: deny\n        message:",
			new:   "      - rule: no-edit-in-prod\n        action: warn\n        message:",
			minus: `Action: "warn",`, plus: `Action: "deny",`,
		},
		"a message part it does not have": {
			old:   `messageContains: "spec.replicas (last-applied 3, now 5)"`,
			new:   `messageContains: "spec.replicas (last-applied 3, now 6)"`,
			minus: `MessageContains: "spec.replicas (last-applied 3, now 6)",`,
			plus:  `Message: "[imperative-edit] Deployment deployment-scale/web: this write by apply-hygiene-admin`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := copyDir(t, filepath.Join(examples, "no-edit-in-prod"))
			file := filepath.Join(dir, "no-edit-in-prod_test.yaml")
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), tc.old) {
				t.Fatalf("the example no longer has %q", tc.old)
			}
			changed := strings.Replace(string(data), tc.old, tc.new, 1)
			if err := os.WriteFile(file, []byte(changed), 0o644); err != nil {
				t.Fatal(err)
			}

			stdout, stderr, code := run(t, dir)
			if code != cli.ExitFailure {
				t.Errorf("exit %d, want %d", code, cli.ExitFailure)
			}
			if want := "error: 1 of 6 test cases failed\n"; stderr != want {
				t.Errorf("stderr = %q, want %q", stderr, want)
			}
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			if !strings.HasPrefix(lines[0], "FAIL "+file+": ") || lines[1] != "    decisions mismatch (-want +got):" {
				t.Errorf("stdout does not start with the FAIL line and the diff header:\n%s", stdout)
			}
			if last := lines[len(lines)-1]; last != "5 passed, 1 failed" {
				t.Errorf("summary = %q, want %q", last, "5 passed, 1 failed")
			}
			// The diff's layout is cmp's; look for the values only.
			if !hasDiffLine(lines, "-", tc.minus) || !hasDiffLine(lines, "+", tc.plus) {
				t.Errorf("want a diff line - …%s… and a line + …%s…, got:\n%s", tc.minus, tc.plus, stdout)
			}
		})
	}
}

// hasDiffLine reports whether a line starts with sign and has text, both
// after collapsing spaces.
func hasDiffLine(lines []string, sign, text string) bool {
	text = strings.Join(strings.Fields(text), " ")
	for _, l := range lines {
		l = strings.Join(strings.Fields(l), " ")
		if strings.HasPrefix(l, sign) && strings.Contains(l, text) {
			return true
		}
	}
	return false
}

func TestTestRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad_test.yaml")
	if err := os.WriteFile(bad, []byte("cases:\n  - name: x\n    review: missing.json\n    expect: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		args []string
		want string
	}{
		"no argument":         {args: []string{}, want: "error: test needs at least one DIR or FILE\n"},
		"a missing review":    {args: []string{dir}, want: "error: " + bad + `: case "x": reading review: open ` + filepath.Join(dir, "missing.json") + ": no such file or directory\n"},
		"no test files":       {args: []string{t.TempDir()}, want: "error: no *_test.yaml files in "},
		"a missing directory": {args: []string{filepath.Join(dir, "nope")}, want: "error: reading " + filepath.Join(dir, "nope") + ": "},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, stderr, code := run(t, tc.args...)
			if code != cli.ExitBadInput || !strings.HasPrefix(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d, stderr starting with %q", code, stderr, cli.ExitBadInput, tc.want)
			}
		})
	}
}

// kubectl hygiene test judges the /scale of a custom resource where its
// CRD (among the case's objects) says the Scale sets the count, spec.size,
// not at spec.replicas, which the Queue's manifest also has; without the
// CRD the scale is not reviewed, as in the server.
func TestTestJudgesACustomResourceScaleAtItsCRDsPath(t *testing.T) {
	stdout, stderr, code := run(t, "testdata/customscale")
	if code != cli.ExitOK || stderr != "" || stdout != "2 passed, 0 failed\n" {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
}
