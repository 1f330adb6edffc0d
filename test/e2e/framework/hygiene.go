package framework

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// hygieneTimeout bounds one kubectl-hygiene run.
const hygieneTimeout = time.Minute

// Hygiene runs the built kubectl-hygiene (HygieneBinary) with args and
// the framework's kubeconfig, as the admin, with a home of its own and a
// minute to finish, and logs what it printed. It fails t only when the
// binary cannot be run at all.
func (f *Framework) Hygiene(t *testing.T, args ...string) Result {
	t.Helper()
	// The first call of a package builds the binary, which takes more than
	// the run's minute on a busy machine: build before the clock starts.
	HygieneBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), hygieneTimeout)
	defer cancel()
	return runKubectl(t, f.HygieneCommand(ctx, t, args...), append([]string{"hygiene"}, args...))
}

// HygieneCommand is the command Hygiene runs, for a test that drives the
// process itself (its stdin, its stderr as it comes); HygieneResult
// turns what it printed into a Result. A caller whose ctx has a deadline
// calls HygieneBinary before it starts the clock, as Hygiene does.
func (f *Framework) HygieneCommand(ctx context.Context, t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, HygieneBinary(t), append(args, "--kubeconfig", f.Kubectl.Kubeconfig)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), clientGC)
	return cmd
}

// HygieneResult is the Result of a HygieneCommand with args that ended
// with err (what its Wait or Run returned) and printed stdout and stderr;
// it logs the run and fails t when the command could not be run at all.
func HygieneResult(t *testing.T, args []string, err error, stdout, stderr string) Result {
	t.Helper()
	return resultOf(t, append([]string{"hygiene"}, args...), err, stdout, stderr)
}
