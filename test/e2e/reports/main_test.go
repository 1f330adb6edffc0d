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

// clusterRoles adds ClusterRoles to the kinds (extraKinds): the audit
// lists them too, and their findings go to the ClusterReport.
const clusterRoles = "extraKinds[0].group=rbac.authorization.k8s.io,extraKinds[0].version=v1,extraKinds[0].resource=clusterroles,extraKinds[0].scope=Cluster"

// auditResources is the --audit-resources that the chart renders with
// clusterRoles: the server runs with it and the chart's RBAC.
const auditResources = "apps/v1/deployments,apps/v1/statefulsets,apps/v1/daemonsets,rbac.authorization.k8s.io/v1/clusterroles"

func TestMain(m *testing.M) {
	framework.Main(m, framework.WithWebhook("audit.enabled=true", "audit.reports.format=openreports", clusterRoles),
		framework.WithServerArgs("--audit-interval=2s", "--audit-resources="+auditResources, "--reports-format=openreports"))
}
