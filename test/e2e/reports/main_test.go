// Package reports_test runs the server's periodic audit with policy
// reports in the OpenReports format (chart values audit.enabled,
// audit.reports.format=openreports; the server with the chart's RBAC):
// without the CRDs the server runs on and says so in its log, a metric and
// an event on its Pod; once the CRDs of github.com/openreports/reports-api
// are installed, a namespace's drift becomes a Report whose results are
// `kubectl hygiene audit -o json`'s findings, and fixing the drift empties
// it at the next audit.
package reports_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

func TestMain(m *testing.M) {
	framework.Main(m, framework.WithWebhook("audit.enabled=true", "audit.reports.format=openreports"),
		framework.WithServerArgs("--audit-interval=2s", "--reports-format=openreports"))
}
