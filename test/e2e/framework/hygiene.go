package framework

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Hygiene runs the built kubectl-hygiene (HygieneBinary) with args and
// the framework's kubeconfig, as the admin, with a home of its own and a
// minute to finish, and logs what it printed. It fails t only when the
// binary cannot be run at all.
func (f *Framework) Hygiene(t *testing.T, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, HygieneBinary(t), append(args, "--kubeconfig", f.Kubectl.Kubeconfig)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := Result{Args: append([]string{"hygiene"}, args...), Stdout: stdout.String(), Stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		r.ExitCode = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("running kubectl-hygiene %s: %v", strings.Join(args, " "), err)
	}
	t.Logf("$ kubectl hygiene %s (exit %d)\n%s%s", strings.Join(args, " "), r.ExitCode, r.Stdout, r.Stderr)
	return r
}
