package kinds_test

import (
	"os"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// hygiene runs kubectl hygiene audit and explain on the drifted object:
// audit finds the edit (a deny finding, so it exits 1) with the installed
// chart's configuration, as it says, and explain lists
// every field with its owner and status.
func (s *scenario) hygiene(t *testing.T) {
	t.Helper()
	k, args := s.k, []string{"hygiene", "audit", "--kind", s.c.Resource}
	if s.c.ClusterScoped {
		k.Namespace = ""
		args = append(args, "-A")
	}
	audit := k.Run(t, args...)
	s.outputs = append(s.outputs, audit.Stdout, audit.Stderr)
	if audit.ExitCode != 1 {
		t.Errorf("kubectl hygiene audit exited %d, want 1 (a deny finding)", audit.ExitCode)
	}
	framework.WantLines(t, audit.Stderr,
		"using policy configuration from configmap apply-hygiene/apply-hygiene-config and no user policies",
		"error: 1 finding(s) with the action deny")
	framework.WantMatch(t, columns(audit.Stdout), expand(s.f.Namespace, s.c.Audit)...)

	explain := s.k.Run(t, "hygiene", "explain", s.c.Object).MustSucceed(t)
	s.outputs = append(s.outputs, explain.Stdout, explain.Stderr)
	framework.WantMatch(t, columns(explain.Stdout), expand(s.f.Namespace, s.c.Explain)...)
}

// columns returns a table with each run of spaces made one: the width of
// a column follows the test's namespace name.
func columns(table string) string {
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	for i, line := range lines {
		lines[i] = strings.Join(strings.Fields(line), " ")
	}
	return strings.Join(lines, "\n")
}

// noSecrets checks that no output of the scenario, no line of the
// server's log and no event shows a value of Secrets.
func (s *scenario) noSecrets(t *testing.T) {
	t.Helper()
	if len(s.c.Secrets) == 0 {
		return
	}
	log, err := os.ReadFile(framework.Webhook(t).LogPath)
	if err != nil {
		t.Fatal(err)
	}
	events := s.k.Run(t, "get", "events", "-o", "yaml").MustSucceed(t).Stdout
	sources := map[string]string{"kubectl's output": strings.Join(s.outputs, "\n"), "the server's log": string(log), "the events": events}
	for what, text := range sources {
		for _, v := range s.c.Secrets {
			if strings.Contains(text, v) {
				t.Errorf("%s shows the secret value %q", what, v)
			}
		}
	}
}
