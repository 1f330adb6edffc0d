// Package migrate_test moves Deployments applied client-side to
// server-side apply on a real control plane with real kubectl, and checks
// what `kubectl hygiene migrate --server-side`, the built binary, prints and
// writes: after the upgrade a server-side apply deletes the fields its
// manifest dropped; without it, an applier that does not upgrade (a
// controller applying through client-go) leaves them behind. apply-hygiene
// is installed: migrate's writes must draw no warning from it.
package migrate_test

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
	code := framework.Run(m, framework.WithWebhook())
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
