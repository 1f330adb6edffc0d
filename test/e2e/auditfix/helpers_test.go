package auditfix_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// result is one run of the kubectl-hygiene binary.
type result struct {
	stdout, stderr string
	code           int
}

// hygieneCmd is the built kubectl-hygiene with args, the framework's
// kubeconfig and the test's namespace.
func hygieneCmd(ctx context.Context, t *testing.T, f *framework.Framework, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, framework.HygieneBinary(t), append(args, "-n", f.Namespace, "--kubeconfig", f.Kubectl.Kubeconfig)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	return cmd
}

// runHygiene runs kubectl hygiene with args in the test's namespace.
func runHygiene(t *testing.T, f *framework.Framework, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := hygieneCmd(ctx, t, f, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return finish(t, args, cmd.Run(), stdout.String(), stderr.String())
}

// runPaused runs kubectl hygiene with args and --pause-before-write, and
// calls between once the command has scanned and waits before writing.
func runPaused(t *testing.T, f *framework.Framework, between func(), args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	args = append(args, "--pause-before-write")
	cmd := hygieneCmd(ctx, t, f, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting kubectl-hygiene: %v", err)
	}
	errLines := bufio.NewReader(errPipe)
	first, err := errLines.ReadString('\n')
	if err != nil {
		t.Fatalf("reading kubectl-hygiene's stderr: %v (read %q)", err, first)
	}
	between()
	if _, err := io.WriteString(stdin, "\n"); err != nil {
		t.Fatalf("writing to kubectl-hygiene's stdin: %v", err)
	}
	rest, err := io.ReadAll(errLines)
	if err != nil {
		t.Fatalf("reading kubectl-hygiene's stderr: %v", err)
	}
	return finish(t, args, cmd.Wait(), stdout.String(), first+string(rest))
}

func finish(t *testing.T, args []string, err error, stdout, stderr string) result {
	t.Helper()
	res := result{stdout: stdout, stderr: stderr}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		res.code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("running kubectl-hygiene %s: %v", strings.Join(args, " "), err)
	}
	t.Logf("$ kubectl hygiene %s (exit %d)\n%s%s", strings.Join(args, " "), res.code, res.stdout, res.stderr)
	return res
}

// wantExit fails t unless res exited with code.
func wantExit(t *testing.T, res result, code int) {
	t.Helper()
	if res.code != code {
		t.Errorf("kubectl hygiene exited %d, want %d", res.code, code)
	}
}
