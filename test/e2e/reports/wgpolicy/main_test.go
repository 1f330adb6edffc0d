// Package wgpolicy_test runs the server's periodic audit with policy
// reports in the older wgpolicyk8s.io/v1alpha2 format (chart values
// audit.enabled, audit.reports.format=wgpolicy; the server with the
// chart's RBAC, which grants the PolicyReport kinds only): once the CRDs
// are installed, a namespace's drift becomes a PolicyReport whose results,
// read back through the CRD's schema, are `kubectl hygiene audit -o
// json`'s findings, and fixing the drift empties it.
package wgpolicy_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

func TestMain(m *testing.M) {
	framework.Main(m, framework.WithWebhook("audit.enabled=true", "audit.reports.format=wgpolicy"),
		framework.WithServerArgs("--audit-interval=2s", "--reports-format=wgpolicy"))
}
