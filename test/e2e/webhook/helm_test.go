package webhook_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// frozenChart is a Helm chart whose Deployment template was copied from
// kubectl get -o yaml of an object applied with kubectl: it carries that
// apply's last-applied, frozen, while the image comes from the values.
const frozenChart = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"web","namespace":"default"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1.14.2","name":"nginx"}]}}}}
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: {{ .Values.image }}
`

// A helm upgrade by a person of a chart whose template carries a frozen
// last-applied (issue 25) passes without a word: Helm wrote that
// annotation (managedFields says so), it applies with its own three-way
// patch, and a last-applied that only Helm wrote is no proof that kubectl
// apply owns those fields. It was denied as [imperative-edit].
func TestHelmUpgradeOfAChartWithAFrozenLastAppliedPasses(t *testing.T) {
	f := framework.New(t)
	chart := t.TempDir()
	files := map[string]string{
		"Chart.yaml":                "apiVersion: v2\nname: frozen\nversion: 0.1.0\n",
		"values.yaml":               "image: nginx:1.14.2\n",
		"templates/deployment.yaml": frozenChart,
	}
	for name, content := range files {
		path := filepath.Join(chart, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	helm := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		bin := filepath.Join(filepath.Dir(framework.KubectlPath()), "helm")
		cmd := exec.CommandContext(ctx, bin, append(args, "--namespace", f.Namespace)...)
		cmd.Env = append(cmd.Environ(), "KUBECONFIG="+f.Kubectl.Kubeconfig,
			"HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		t.Logf("$ helm %s\n%s%s", strings.Join(args, " "), stdout.String(), stderr.String())
		if err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stderr.String()
	}
	framework.WantLines(t, helm("install", "frozen", chart))
	framework.WantLines(t, helm("upgrade", "frozen", chart, "--set", "image=nginx:1.16.1"))
	framework.WantLines(t, f.Kubectl.JSONPath(t, "deployment/web", "{.spec.template.spec.containers[0].image}"), "nginx:1.16.1")
}
