package framework

import (
	"encoding/json"
	"testing"
)

// AuditFinding is what `kubectl hygiene audit -o json` prints of one
// finding.
type AuditFinding struct {
	Rule    string `json:"rule"`
	Action  string `json:"action"`
	Path    string `json:"path"`
	Message string `json:"message"`
	// Fix is the command the message shows, as the decision carries it.
	Fix    string `json:"fix"`
	Object struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Namespace  string `json:"namespace"`
		Name       string `json:"name"`
	} `json:"object"`
}

// ParseAuditFindings decodes the findings of what `kubectl hygiene audit
// -o json` printed; it fails t when stdout is not that.
func ParseAuditFindings(t *testing.T, stdout string) []AuditFinding {
	t.Helper()
	var out struct {
		Findings []AuditFinding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("decoding kubectl hygiene audit -o json: %v\n%s", err, stdout)
	}
	return out.Findings
}

// AuditFindings runs `kubectl hygiene audit -o json` with args (-n
// NAMESPACE, or -A --kind …) and returns its findings. Exit status 1
// means a finding is a deny: the output is what counts.
func (f *Framework) AuditFindings(t *testing.T, args ...string) []AuditFinding {
	t.Helper()
	res := f.Hygiene(t, append([]string{"audit", "-o", "json"}, args...)...)
	if res.ExitCode != 0 && res.ExitCode != 1 {
		t.Fatalf("kubectl hygiene audit: exit %d\n%s", res.ExitCode, res.Stderr)
	}
	return ParseAuditFindings(t, res.Stdout)
}
