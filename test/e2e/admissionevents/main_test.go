// Package admissionevents_test checks what a decision leaves behind
// besides kubectl's output: a Warning event on the object (kubectl events)
// for each rule that denies or warns, never for a dry run, and the audit
// annotations in the API server's audit log (which rule fired, how, on
// which write). The server runs from the chart in url mode with the
// chart's service account, so its RBAC is the chart's.
package admissionevents_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

func TestMain(m *testing.M) {
	framework.Main(m, framework.WithWebhook())
}
