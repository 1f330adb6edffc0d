package webhook_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Ten labels set with kubectl label, then an apply of the manifest that
// never had them (seed 003's v2): ten orphaned-field warnings of about 400 characters are
// more than the API server passes on for one write (4 KiB; past it, it
// cuts every warning to 256 characters, remedy commands included). kubectl
// prints the first ones whole and one line that counts the rest, and
// kubectl hygiene diff (applyPredicted) predicts exactly that.
func TestManyWarningsStayWholeWithinTheAPIServersLimit(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	framework.ApplyPredicted(t, k, seeds+"seed003-v1.yaml").MustSucceed(t)
	for i := range 10 {
		k.Run(t, "label", "deployment/nginx-deployment", fmt.Sprintf("team.example.com/owner-%02d=platform-engineering", i)).MustSucceed(t)
	}

	apply := framework.ApplyPredicted(t, k, seeds+"seed003-v2.yaml").MustSucceed(t)
	var whole int
	for _, line := range strings.Split(apply.Stderr, "\n") {
		if strings.HasPrefix(line, "Warning: [orphaned-field] ") {
			whole++
			if !strings.Contains(line, " Remove it with: kubectl patch deployments.apps/nginx-deployment -n "+f.Namespace+" --type=json -p '[") || !strings.HasSuffix(line, "]'") {
				t.Errorf("a warning was cut: %s", line)
			}
		}
	}
	if whole == 0 || whole >= 10 {
		t.Fatalf("%d whole orphaned-field warnings, want some but not all 10:\n%s", whole, apply.Stderr)
	}
	framework.WantLines(t, grepLines(apply.Stderr, "Warning: [apply-hygiene]"),
		fmt.Sprintf("Warning: [apply-hygiene] %d more warnings (%d orphaned-field) left out: the API server passes on at most 4 KiB of warnings for a write. "+
			"See every finding with: kubectl hygiene explain deployments.apps/nginx-deployment -n %s", 10-whole, 10-whole, f.Namespace))
}

// grepLines returns the lines of s that start with prefix.
func grepLines(s, prefix string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
