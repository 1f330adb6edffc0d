package reliability_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The server refuses to start with a user policy that calls http.send,
// naming the file, the line and why.
func TestServerRefusesPolicyCallingHTTPSend(t *testing.T) {
	binary := framework.Webhook(t).Binary
	dir := t.TempDir()
	src := "package applyhygiene.rules.exfiltrate\n\nx := http.send({\"method\": \"GET\", \"url\": \"http://example.com\"})\n"
	if err := os.WriteFile(filepath.Join(dir, "exfiltrate.rego"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "--kubeconfig="+framework.ControlPlane(t).KubeconfigPath(), "--policy-dir="+dir,
		"--cert-dir="+t.TempDir(), "--metrics-bind-address=0", "--health-probe-bind-address=0", "--port=1")
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("the server started with a policy calling http.send (err %v):\n%s", err, out)
	}
	want := "exfiltrate.rego:3: rego_type_error: undefined function http.send (apply-hygiene policies may not reach the network, the environment or the runtime)"
	if !strings.Contains(string(out), want) {
		t.Errorf("the server's output does not name the policy problem %q:\n%s", want, out)
	}
}
