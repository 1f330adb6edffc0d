package audit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

const seeds = "../seeds/testdata/"

// result is one run of the kubectl-hygiene binary.
type result struct {
	stdout, stderr string
	code           int
}

// runHygiene runs the built kubectl-hygiene with the framework's kubeconfig.
func runHygiene(t *testing.T, f *framework.Framework, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, framework.HygieneBinary(t), append(args, "--kubeconfig", f.Kubectl.Kubeconfig)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		res.code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("running kubectl-hygiene %s: %v", strings.Join(args, " "), err)
	}
	t.Logf("$ kubectl hygiene %s (%v, exit %d)\n%s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond), res.code, res.stderr)
	return res
}

// cleanObjects writes n Deployments and n StatefulSets, with no replicas,
// as one multi-document file.
func cleanObjects(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		for _, kind := range []string{"Deployment", "StatefulSet"} {
			name := fmt.Sprintf("clean-%s-%03d", strings.ToLower(kind), i)
			service := ""
			if kind == "StatefulSet" {
				service = "  serviceName: " + name + "\n"
			}
			fmt.Fprintf(&b, `---
apiVersion: apps/v1
kind: %s
metadata:
  name: %s
  labels:
    app: %s
spec:
%s  replicas: 0
  selector:
    matchLabels:
      app: %s
  template:
    metadata:
      labels:
        app: %s
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.2
        env:
        - name: INDEX
          value: "%d"
`, kind, name, name, service, name, name, i)
		}
	}
	path := filepath.Join(t.TempDir(), "clean.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
