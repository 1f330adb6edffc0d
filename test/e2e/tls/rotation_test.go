// Package tls_test runs apply-hygiene with self-managed TLS and
// failurePolicy Fail: the server makes its own CA and certificate, injects
// the CA into the webhook configurations, and rotates them while writes go
// on; any request the API server cannot send fails the write.
package tls_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

func TestMain(m *testing.M) {
	// A 40 s certificate renewed 30 s before expiry: a rotation every ~10 s.
	framework.Main(m, framework.WithWebhook("failurePolicy=Fail"),
		framework.WithSelfManagedTLS("--tls-validity=40s", "--tls-renew-before=30s", "--tls-check-interval=1s"))
}

// 200 applies while the certificate rotates: none fails, every one was
// reviewed (failurePolicy Fail), and the Secret did rotate meanwhile.
func TestRotationDuringApplies(t *testing.T) {
	f := framework.New(t)
	ctx := t.Context()
	secrets := f.Client.CoreV1().Secrets(devenv.Namespace)
	first, err := secrets.Get(ctx, devenv.TLSSecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the self-managed TLS Secret: %v", err)
	}
	hooks, err := f.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, devenv.Release, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(hooks.Webhooks[0].ClientConfig.CABundle, first.Data["ca.crt"][:64]) {
		t.Fatalf("the validating webhook's caBundle does not hold the Secret's CA")
	}

	rotations := map[string]bool{string(first.Data["tls.crt"]): true}
	failures := 0
	deadline := time.Now().Add(5 * time.Minute)
	for i := range 200 {
		manifest := deployment(fmt.Sprintf("web-%d", i%10), fmt.Sprintf("nginx:1.%d", i))
		res := f.Kubectl.RunWithInput(t, manifest, "apply", "-f", "-")
		if res.ExitCode != 0 {
			failures++
			t.Errorf("apply %d failed: %s", i, res.Stderr)
		}
		if s, err := secrets.Get(ctx, devenv.TLSSecretName, metav1.GetOptions{}); err == nil {
			rotations[string(s.Data["tls.crt"])] = true
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d applies in 5 minutes", i)
		}
	}
	if failures > 0 {
		t.Errorf("%d of 200 applies failed during rotation", failures)
	}
	if len(rotations) < 2 {
		t.Errorf("saw %d serving certificate(s) during the applies, want at least one rotation", len(rotations))
	}
	t.Logf("200 applies, %d failures, %d serving certificates", failures, len(rotations))
	waitForWebhookCalls(t)
}

// waitForWebhookCalls checks that the API server really called the
// webhook (with failurePolicy Fail a broken TLS setup would have failed
// the applies, but a missing registration would not).
func waitForWebhookCalls(t *testing.T) {
	t.Helper()
	framework.Eventually(t, 10*time.Second, "validate calls in the metrics", func(context.Context) (bool, error) {
		return framework.Webhook(t).ValidateCalls(t.Context()) > 0, nil
	})
}

func deployment(name, image string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
spec:
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
        image: %[2]s
`, name, image)
}
