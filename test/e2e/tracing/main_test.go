// Package tracing_test runs kube-apiserver with its own tracing on and
// apply-hygiene with tracing to the same in-test OTLP receiver, and shows
// that a kubectl apply's webhook calls and apply-hygiene's reviews are one
// trace (issue 29, section 3).
package tracing_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// otlp is the receiver both send their spans to.
var otlp *receiver

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if otlp, err = startReceiver(); err != nil {
		fmt.Fprintln(os.Stderr, "starting the OTLP receiver:", err)
		return 1
	}
	defer otlp.server.Stop()
	dir, err := os.MkdirTemp("", "apply-hygiene-tracing-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	config := filepath.Join(dir, "tracing.yaml")
	// Every request the API server serves is traced.
	tracingConfig := fmt.Sprintf("apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: %s\nsamplingRatePerMillion: 1000000\n", otlp.addr)
	if err := os.WriteFile(config, []byte(tracingConfig), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return framework.Run(m,
		framework.WithAPIServerArgs("--tracing-config-file="+config),
		framework.WithWebhook(),
		// No sampling of its own: apply-hygiene follows the API server's
		// traceparent.
		framework.WithServerArgs("--tracing-endpoint="+otlp.addr, "--tracing-insecure", "--tracing-sampling-ratio=0"))
}
