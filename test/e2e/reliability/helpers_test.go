package reliability_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// deployment is the manifest of one client's Deployment at generation gen.
func deployment(name string, gen int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
spec:
  replicas: 0
  revisionHistoryLimit: 2
  selector:
    matchLabels:
      app: %[1]s
  template:
    metadata:
      labels:
        app: %[1]s
    spec:
      containers:
      - name: app
        image: registry.example/app:%[2]d
`, name, gen)
}

// run is one kubectl run, without the framework's per-run log: the load
// tests make a thousand.
type run struct {
	stdout, stderr string
	err            error
}

// quietApply runs kubectl apply -f - with manifest as k.
func quietApply(ctx context.Context, k framework.Kubectl, home, manifest string) run {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.Path, "apply", "-f", "-", "--namespace="+k.Namespace)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+k.Kubeconfig, "HOME="+home)
	cmd.Stdin = strings.NewReader(manifest)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return run{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// live is what the tests compare of a Deployment: its image and its
// last-applied, decoded.
type live struct {
	Image       string
	LastApplied map[string]any
}

func liveDeployment(t *testing.T, f *framework.Framework, name string) live {
	t.Helper()
	d, err := f.Client.AppsV1().Deployments(f.Namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading deployment %s: %v", name, err)
	}
	var la map[string]any
	if err := json.Unmarshal([]byte(d.Annotations[lastAppliedAnnotation]), &la); err != nil {
		t.Fatalf("deployment %s: last-applied %q is not JSON: %v", name, d.Annotations[lastAppliedAnnotation], err)
	}
	return live{Image: d.Spec.Template.Spec.Containers[0].Image, LastApplied: la}
}

// wantApplied is what kubectl apply of manifest in namespace leaves: its
// image, and the manifest itself as last-applied (kubectl adds the
// namespace, and an empty annotations map, the annotation's own place).
func wantApplied(t *testing.T, namespace, manifest string) live {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(manifest), &m); err != nil {
		t.Fatal(err)
	}
	meta := m["metadata"].(map[string]any)
	meta["namespace"], meta["annotations"] = namespace, map[string]any{}
	containers := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
	return live{Image: containers[0].(map[string]any)["image"].(string), LastApplied: m}
}

func checkApplied(t *testing.T, f *framework.Framework, name, manifest string) {
	t.Helper()
	if diff := cmp.Diff(wantApplied(t, f.Namespace, manifest), liveDeployment(t, f, name)); diff != "" {
		t.Errorf("deployment %s is not as its last apply asked (-want +got):\n%s", name, diff)
	}
}
