package framework

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clientGC is the GOGC of the kubectl and kubectl-hygiene processes the
// tests run: short-lived clients that parse the API server's OpenAPI
// document on each run collect less often, which saves about a fifth of a
// kubectl apply's CPU (0.44 → 0.35 s on the 2-core CI machine), where the
// e2e packages are bound by CPU. Their behaviour does not depend on it.
const clientGC = "GOGC=400"

// kubectlTimeout bounds one kubectl run; none of the scenarios needs more.
const kubectlTimeout = 2 * time.Minute

// Kubectl runs a kubectl binary against the control plane as one identity,
// in one namespace.
type Kubectl struct {
	// Path is the kubectl binary.
	Path string
	// Kubeconfig selects the identity.
	Kubeconfig string
	// Namespace is passed as -n unless empty.
	Namespace string
	// Env holds extra environment variables, such as EDITOR=….
	Env []string
}

// Result is what one kubectl run printed and how it exited.
type Result struct {
	Args     []string
	Stdout   string
	Stderr   string
	ExitCode int
}

// Run runs kubectl with args and returns its output; it fails t only when
// kubectl cannot be started at all.
func (k Kubectl) Run(t *testing.T, args ...string) Result {
	t.Helper()
	return k.RunWithInput(t, "", args...)
}

// RunWithInput is Run with stdin, for `kubectl apply -f -`.
func (k Kubectl) RunWithInput(t *testing.T, stdin string, args ...string) Result {
	t.Helper()
	// Not t.Context(): it is canceled before cleanups run, and cleanups
	// run kubectl too.
	ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
	defer cancel()
	full := append([]string{}, args...)
	if k.Namespace != "" {
		full = append(full, "--namespace="+k.Namespace)
	}
	cmd := exec.CommandContext(ctx, k.Path, full...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+k.Kubeconfig, "HOME="+env.home, "KUBECTL_COMMAND_HEADERS=true", clientGC)
	cmd.Env = append(cmd.Env, k.Env...)
	cmd.Stdin = strings.NewReader(stdin)
	return runKubectl(t, cmd, args)
}

// runKubectl runs cmd, a kubectl command whose arguments after "kubectl" are
// args, and returns what it printed and its exit code, which it logs. It
// fails t only when cmd cannot be run at all.
func runKubectl(t *testing.T, cmd *exec.Cmd, args []string) Result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return resultOf(t, args, err, stdout.String(), stderr.String())
}

// resultOf is the Result of a kubectl command whose arguments after
// "kubectl" are args, that ended with err and printed stdout and stderr;
// it logs the run and fails t when the command could not be run at all.
func resultOf(t *testing.T, args []string, err error, stdout, stderr string) Result {
	t.Helper()
	res := Result{Args: args, Stdout: stdout, Stderr: stderr}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("running kubectl %s: %v", strings.Join(args, " "), err)
	}
	t.Logf("$ kubectl %s\n%s%s(exit %d)", strings.Join(args, " "), res.Stdout, res.Stderr, res.ExitCode)
	return res
}

// MustSucceed fails t unless kubectl exited 0 and returns the result.
func (r Result) MustSucceed(t *testing.T) Result {
	t.Helper()
	if r.ExitCode != 0 {
		t.Fatalf("kubectl %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.Args, " "), r.ExitCode, r.Stdout, r.Stderr)
	}
	return r
}

// MustFail fails t unless kubectl exited non-zero and returns the result.
func (r Result) MustFail(t *testing.T) Result {
	t.Helper()
	if r.ExitCode == 0 {
		t.Fatalf("kubectl %s: succeeded, want a failure\nstdout:\n%s\nstderr:\n%s", strings.Join(r.Args, " "), r.Stdout, r.Stderr)
	}
	return r
}

// StdoutLines returns stdout split into lines, without the final newline.
func (r Result) StdoutLines() []string { return lines(r.Stdout) }

// StderrLines returns stderr split into lines, without the final newline.
func (r Result) StderrLines() []string { return lines(r.Stderr) }

func lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// RunPrinted runs command, a kubectl command line as apply-hygiene's
// messages print it, through sh as a user would: the built kubectl first
// on PATH (and, for a `kubectl hygiene` command, the built kubectl-hygiene
// plugin, which kubectl finds there) and k's kubeconfig. It fails t when
// the command fails and returns its combined output.
func (k Kubectl) RunPrinted(t *testing.T, command string) string {
	t.Helper()
	path := filepath.Dir(KubectlPath()) + ":" + os.Getenv("PATH")
	if strings.HasPrefix(command, "kubectl hygiene ") {
		path = filepath.Dir(HygieneBinary(t)) + ":" + path
	}
	sh := exec.Command("sh", "-c", command)
	sh.Env = append(os.Environ(), "PATH="+path, "KUBECONFIG="+k.Kubeconfig, clientGC)
	out, err := sh.CombinedOutput()
	if err != nil {
		t.Fatalf("running %s: %v\n%s", command, err, out)
	}
	return string(out)
}
