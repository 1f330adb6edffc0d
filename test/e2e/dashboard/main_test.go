// Package dashboard_test checks the chart's Grafana dashboard
// (charts/apply-hygiene/files/grafana-dashboard.json) and PrometheusRule
// against what really runs: after writes that pass, warn, are denied, fail
// at the server and cannot reach it, and after a periodic audit that
// publishes policy reports (without their CRDs), every metric that a
// dashboard query or an alert expression names is exported by the
// server's /metrics or the API server's.
package dashboard_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The audit runs every 2 s and publishes OpenReports reports, whose CRDs
// are not installed: the report metrics are exported all the same.
func TestMain(m *testing.M) {
	framework.Main(m, framework.WithWebhook("audit.enabled=true", "audit.reports.format=openreports"),
		framework.WithServerArgs("--audit-interval=2s", "--reports-format=openreports"))
}
