// Package secrets_test plants canary values in a Secret that has drift,
// an orphaned key and imperative edits, with apply-hygiene reviewing
// Secrets (chart value kinds=common), its periodic audit on and its
// reports in the OpenReports format, and scans every output for them:
// kubectl's denials and warnings, every command and output format of
// kubectl hygiene (diff, explain, audit, audit --fix, test, migrate), the
// server's log, its metrics, every Event and every policy report.
package secrets_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// auditResources is the --audit-resources that the chart renders for
// kinds=common (never Secrets; test/chart holds it equal to the
// ClusterRole's list rules).
const auditResources = "v1/configmaps,v1/namespaces,v1/serviceaccounts,v1/services," +
	"apps/v1/deployments,apps/v1/statefulsets,apps/v1/daemonsets,autoscaling/v2/horizontalpodautoscalers," +
	"batch/v1/cronjobs,batch/v1/jobs,networking.k8s.io/v1/ingresses,networking.k8s.io/v1/networkpolicies," +
	"policy/v1/poddisruptionbudgets,rbac.authorization.k8s.io/v1/clusterrolebindings," +
	"rbac.authorization.k8s.io/v1/clusterroles,rbac.authorization.k8s.io/v1/rolebindings,rbac.authorization.k8s.io/v1/roles"

func TestMain(m *testing.M) {
	framework.Main(m, framework.WithWebhook("kinds=common", "audit.enabled=true", "audit.reports.format=openreports"),
		framework.WithServerArgs("--audit-interval=2s", "--audit-resources="+auditResources, "--reports-format=openreports"))
}
