package webhook_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// frozenChart is a Helm chart whose Deployment template was copied from
// kubectl get -o yaml of an object applied with kubectl: it carries that
// apply's last-applied, frozen, while the image comes from the values.
var frozenChart = strings.Replace(adoptedChart, "  name: web\n", `  name: web
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"web","namespace":"default"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1.14.2","name":"nginx"}]}}}}
`, 1)

// A helm upgrade by a person of a chart whose template carries a frozen
// last-applied (issue 25) passes without a word: Helm wrote that
// annotation (managedFields says so), it applies with its own three-way
// patch, and a last-applied that only Helm wrote is no proof that kubectl
// apply owns those fields. It was denied as [imperative-edit].
func TestHelmUpgradeOfAChartWithAFrozenLastAppliedPasses(t *testing.T) {
	f := framework.New(t)
	chart := writeChart(t, "frozen", frozenChart)
	helm := helmIn(t, f)
	framework.WantLines(t, helm("install", "frozen", chart))
	framework.WantLines(t, helm("upgrade", "frozen", chart, "--set", "image=nginx:1.16.1"))
	framework.WantLines(t, f.Kubectl.JSONPath(t, "deployment/web", "{.spec.template.spec.containers[0].image}"), "nginx:1.16.1")
}

// adoptedChart is a Helm chart of a Deployment that kubectl applied first
// (adoptedManifest): Helm 3 adopts the object at install, because it
// carries Helm's ownership label and annotations.
const adoptedChart = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
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

// adoptedManifest is what kubectl applied: the chart at its default value.
var adoptedManifest = strings.Replace(adoptedChart, "{{ .Values.image }}", "nginx:1.14.2", 1)

// A person's helm install, upgrade and rollback of an object first applied
// with kubectl and then adopted by Helm are that tool's applies (Helm 3
// writes with three-way patches under the field manager helm, one of the
// default policy.deployTools): each that changes a field kubectl's
// last-applied still owns is warned about, never denied. A rollback
// during an incident was denied as [imperative-edit].
func TestHelmAdoptionUpgradeAndRollbackByAPersonAreWarned(t *testing.T) {
	f := framework.New(t)
	f.Kubectl.RunWithInput(t, adoptedManifest, "apply", "-f", "-").MustSucceed(t)
	f.Kubectl.Run(t, "label", "deployment/web", "app.kubernetes.io/managed-by=Helm").MustSucceed(t)
	f.Kubectl.Run(t, "annotate", "deployment/web", "meta.helm.sh/release-name=adopted", "meta.helm.sh/release-namespace="+f.Namespace).MustSucceed(t)
	chart := writeChart(t, "adopted", adoptedChart)
	helm := helmIn(t, f)
	image := func() string {
		return f.Kubectl.JSONPath(t, "deployment/web", "{.spec.template.spec.containers[0].image}")
	}
	warning := func(to string) string {
		return "[imperative-edit] Deployment " + f.Namespace + "/web: this write by apply-hygiene-admin (field manager helm, a deployment tool) changes fields that last-applied owns: " +
			`spec.template.spec.containers[name=nginx].image (last-applied "nginx:1.14.2", now "` + to + `"); ` +
			"the next kubectl apply puts the last-applied values back without a word. " +
			"If helm manages them now, hand them over to it by deleting them from last-applied with: " +
			"kubectl hygiene handover deployments.apps/web -n " + f.Namespace + " 'spec.template.spec.containers[name=nginx].image'"
	}
	wantWarned(t, helm("install", "adopted", chart, "--set", "image=nginx:1.16.1"), warning("nginx:1.16.1"))
	framework.WantLines(t, image(), "nginx:1.16.1")
	wantWarned(t, helm("upgrade", "adopted", chart, "--set", "image=nginx:1.17.0"), warning("nginx:1.17.0"))
	framework.WantLines(t, image(), "nginx:1.17.0")
	wantWarned(t, helm("rollback", "adopted", "1"), warning("nginx:1.16.1"))
	framework.WantLines(t, image(), "nginx:1.16.1")
}

// writeChart writes a chart named name with one template and an image
// value, and returns its directory.
func writeChart(t *testing.T, name, template string) string {
	t.Helper()
	chart := t.TempDir()
	files := map[string]string{
		"Chart.yaml":                "apiVersion: v2\nname: " + name + "\nversion: 0.1.0\n",
		"values.yaml":               "image: nginx:1.14.2\n",
		"templates/deployment.yaml": template,
	}
	for file, content := range files {
		path := filepath.Join(chart, file)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return chart
}

// helmIn returns a runner of the pinned helm in the test's namespace, as
// the test's kubectl user; it fails the test when helm fails and returns
// what helm printed on stderr.
func helmIn(t *testing.T, f *framework.Framework) func(args ...string) string {
	home := t.TempDir()
	return func(args ...string) string {
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
}

// wantWarned checks that helm's stderr is exactly the one warning, as
// Helm 3 logs it: a klog line whose message is the quoted "Warning: …".
func wantWarned(t *testing.T, stderr, warning string) {
	t.Helper()
	want := "] " + strconv.Quote("Warning: "+warning)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasSuffix(lines[0], want) {
		t.Errorf("helm's stderr is not the one warning\n%s\nwant a line ending in\n%s", stderr, want)
	}
}
