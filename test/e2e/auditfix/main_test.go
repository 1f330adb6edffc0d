// Package auditfix_test runs `kubectl hygiene audit --fix`, the built
// binary, on a real control plane without apply-hygiene, so that the
// drift it fixes is made as it is in a cluster where apply-hygiene was
// installed later: a rollout undo that left last-applied stale (seed 004's
// StatefulSet, and a Deployment), a rollout restart's restartedAt that
// apply never removes, and a change made between the audit's read and its
// write.
package auditfix_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// hygiene is the kubectl-hygiene binary that TestMain builds, and removes
// when the tests end.
var hygiene string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kubectl-hygiene-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "creating a directory for kubectl-hygiene:", err)
		os.Exit(1)
	}
	hygiene = filepath.Join(dir, "kubectl-hygiene")
	build := exec.Command("go", "build", "-o", hygiene, "github.com/apply-hygiene/apply-hygiene/cmd/kubectl-hygiene")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building kubectl-hygiene:", err)
		os.Exit(1)
	}
	code := framework.Run(m)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
