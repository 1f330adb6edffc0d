package reliability_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

const (
	undoV1 = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 0
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: registry.example/app:1
        env:
        - name: TO_BE_DELETED
          value: "1"
`
	undoV2 = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 0
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: registry.example/app:2
`
)

// A server killed during a rollout undo never leaves a half-repaired
// last-applied: it is the one before the undo or the fully repaired one
// (as the server writes it when it is not killed), and always JSON.
func TestKillDuringRolloutUndo(t *testing.T) {
	w, cp := framework.Webhook(t), framework.ControlPlane(t)
	var old, repaired map[string]any
	t.Run("reference undo with the server up", func(t *testing.T) {
		f := framework.New(t)
		old = prepareUndo(t, f)
		f.Kubectl.Run(t, "rollout", "undo", "deployment/web").MustSucceed(t)
		repaired = lastAppliedOf(t, f, "web")
		if cmp.Equal(old, repaired) {
			t.Fatalf("the undo with the server up did not repair last-applied: %v", repaired)
		}
	})
	if repaired == nil {
		t.FailNow()
	}
	outcomes := map[string]int{}
	for _, delay := range []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond,
		300 * time.Millisecond, 350 * time.Millisecond, 400 * time.Millisecond, 500 * time.Millisecond} {
		t.Run("killed "+delay.String()+" after the undo started", func(t *testing.T) {
			f := framework.New(t)
			prepareUndo(t, f)
			undo := startKubectl(t, f.Kubectl, "rollout", "undo", "deployment/web")
			time.Sleep(delay)
			if err := w.Kill(); err != nil {
				t.Fatal(err)
			}
			undoErr := undo.Wait()
			if err := w.Restart(t.Context(), cp); err != nil {
				t.Fatal(err)
			}
			if undoErr != nil {
				t.Errorf("rollout undo failed (failurePolicy Ignore): %v", undoErr)
			}
			got := lastAppliedOf(t, f, "web")
			switch {
			case cmp.Equal(got, old):
				outcomes["old"]++
			case cmp.Equal(got, repaired):
				outcomes["repaired"]++
			default:
				t.Errorf("last-applied is neither the old nor the repaired one:\n%s", cmp.Diff(repaired, got))
			}
		})
	}
	t.Logf("last-applied after a killed undo: %v", outcomes)
}

// prepareUndo applies v1 and v2 and returns last-applied (without the
// namespace, which differs between tests).
func prepareUndo(t *testing.T, f *framework.Framework) map[string]any {
	t.Helper()
	f.Kubectl.RunWithInput(t, undoV1, "apply", "-f", "-").MustSucceed(t)
	waitForReplicaSets(t, f, 1)
	f.Kubectl.RunWithInput(t, undoV2, "apply", "-f", "-").MustSucceed(t)
	waitForReplicaSets(t, f, 2)
	return lastAppliedOf(t, f, "web")
}

func waitForReplicaSets(t *testing.T, f *framework.Framework, n int) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, "ReplicaSets of web", func(ctx context.Context) (bool, error) {
		rs, err := f.Client.AppsV1().ReplicaSets(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		return err == nil && len(rs.Items) >= n, err
	})
}

// lastAppliedOf decodes the Deployment's last-applied; it fails t when it
// is not JSON.
func lastAppliedOf(t *testing.T, f *framework.Framework, name string) map[string]any {
	t.Helper()
	d, err := f.Client.AppsV1().Deployments(f.Namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var la map[string]any
	if err := json.Unmarshal([]byte(d.Annotations[lastAppliedAnnotation]), &la); err != nil {
		t.Fatalf("last-applied %q is not JSON: %v", d.Annotations[lastAppliedAnnotation], err)
	}
	if meta, ok := la["metadata"].(map[string]any); ok {
		delete(meta, "namespace")
	}
	return la
}

// startKubectl starts kubectl with args as k and returns the running
// command.
func startKubectl(t *testing.T, k framework.Kubectl, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(k.Path, append(args, "--namespace="+k.Namespace)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+k.Kubeconfig, "HOME="+t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}
