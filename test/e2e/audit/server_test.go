package audit_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// auditResources is the --audit-resources that the chart renders for the
// default kinds (test/chart holds the flag equal to the ClusterRole's
// list and patch rules).
const auditResources = "apps/v1/deployments,apps/v1/statefulsets,apps/v1/daemonsets"

// fixValues are the chart values of TestAuditFixServer's flags, and
// orphaned-field's auditFix knob, without which the audit fix leaves
// orphans (action warn) alone.
var fixValues = []string{"audit.enabled=true", "audit.fix=true", "policy.rules.orphaned-field.auditFix=true"}

// The server's periodic audit with its opt-in fixes.
func TestAuditFixServer(t *testing.T) {
	framework.UseWebhook(t, fixValues, "--audit-interval=2s", "--audit-resources="+auditResources, "--audit-fix")
	t.Run("AuditRemovesRestartedAt", testAuditRemovesRestartedAt)
	t.Run("AuditFixNeedsTheChartsPatchRule", testAuditFixNeedsTheChartsPatchRule)
	t.Run("AuditRepairsLastAppliedAsItsClientSideManager", testAuditRepairsLastAppliedAsItsClientSideManager)
	t.Run("AuditFixStaysInScope", testAuditFixStaysInScope)
}

// The server's periodic audit with the chart's default audit.fix, off.
func TestAuditFixServerOff(t *testing.T) {
	framework.UseWebhook(t, []string{"audit.enabled=true"}, "--audit-interval=2s", "--audit-resources="+auditResources)
	t.Run("AuditFixOffLeavesTheOrphan", testAuditFixOffLeavesTheOrphan)
	t.Run("RemovalProofsPatchIsDryRunOnly", testRemovalProofsPatchIsDryRunOnly)
}

// The server's periodic audit of the kinds of kinds=common.
func TestAuditServer(t *testing.T) {
	framework.UseWebhook(t, []string{"audit.enabled=true", "kinds=common"}, "--audit-interval=2s", "--audit-resources="+commonAuditResources)
	t.Run("PeriodicAuditReportsWithEventAndGauge", testPeriodicAuditReportsWithEventAndGauge)
	t.Run("PeriodicAuditCoversTheCommonKinds", testPeriodicAuditCoversTheCommonKinds)
}
