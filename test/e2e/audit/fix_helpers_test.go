package audit_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// pausedLine is what audit --fix=apply --pause-before-write prints when
// it waits.
const pausedLine = "paused before writing: press Enter to go on"

// noInstallation are the lines in which kubectl hygiene audit says, in
// this package's tests without the chart, which policies it used: the
// defaults, and why.
var noInstallation = []string{
	"using the default policy configuration and no user policies",
	"note: no apply-hygiene ConfigMaps in namespace apply-hygiene; set --hygiene-namespace to where the chart is installed",
}

// runPaused runs kubectl hygiene with args, --pause-before-write and the
// test's namespace, and
// calls between once the command has scanned and waits before writing.
func runPaused(t *testing.T, f *framework.Framework, between func(), args ...string) framework.Result {
	t.Helper()
	framework.HygieneBinary(t) // built before the minute starts
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
	// The pause's line follows what audit says about its policies.
	errLines := bufio.NewReader(errPipe)
	var head strings.Builder
	for {
		line, err := errLines.ReadString('\n')
		head.WriteString(line)
		if err != nil {
			t.Fatalf("reading kubectl-hygiene's stderr: %v (read %q)", err, head.String())
		}
		if line == pausedLine+"\n" {
			break
		}
	}
	between()
	if _, err := io.WriteString(stdin, "\n"); err != nil {
		t.Fatalf("writing to kubectl-hygiene's stdin: %v", err)
	}
	rest, err := io.ReadAll(errLines)
	if err != nil {
		t.Fatalf("reading kubectl-hygiene's stderr: %v", err)
	}
	return framework.HygieneResult(t, args, cmd.Wait(), stdout.String(), head.String()+string(rest))
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
