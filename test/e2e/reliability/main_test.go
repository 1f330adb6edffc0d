// Package reliability_test injects failures into a running apply-hygiene
// and checks what users see: the server killed with SIGKILL during
// parallel applies (failurePolicy Ignore and Fail) and during a rollout
// undo, TLS handshakes against the server's real configuration, a Secret
// canary that must appear in no log, message, metric or event, the server
// refusing a policy that calls http.send, and the chart's ClusterRole
// against what the code calls.
package reliability_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

func TestMain(m *testing.M) {
	framework.Main(m, framework.WithWebhook())
}
