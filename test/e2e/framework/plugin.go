package framework

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// HygienePlugin builds cmd/kubectl-hygiene into t's temporary directory
// and returns its path (Go's build cache makes every build after the
// first quick).
func HygienePlugin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kubectl-hygiene")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/apply-hygiene/apply-hygiene/cmd/kubectl-hygiene")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building kubectl-hygiene: %v\n%s", err, out)
	}
	return bin
}
