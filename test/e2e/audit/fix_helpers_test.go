package audit_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// runPaused runs kubectl hygiene with args, --pause-before-write and the
// test's namespace, and
// calls between once the command has scanned and waits before writing.
func runPaused(t *testing.T, f *framework.Framework, between func(), args ...string) framework.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	args = append(args, "--pause-before-write", "-n", f.Namespace)
	cmd := f.HygieneCommand(ctx, t, args...)
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
	return framework.HygieneResult(t, args, cmd.Wait(), stdout.String(), first+string(rest))
}

// wantExit fails t unless res exited with code.
func wantExit(t *testing.T, res framework.Result, code int) {
	t.Helper()
	if res.ExitCode != code {
		t.Errorf("kubectl hygiene exited %d, want %d", res.ExitCode, code)
	}
}

// runHygiene runs kubectl hygiene with args in the test's namespace.
func runHygiene(t *testing.T, f *framework.Framework, args ...string) framework.Result {
	t.Helper()
	return f.Hygiene(t, append(args, "-n", f.Namespace)...)
}
