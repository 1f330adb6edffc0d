package framework

import (
	"context"
	"os"
	"os/exec"
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
	return runKubectl(t, cmd, append([]string{"hygiene"}, args...))
}
