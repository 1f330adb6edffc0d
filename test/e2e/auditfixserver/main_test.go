// Package auditfixserver_test runs the server's periodic audit with its
// opt-in fixes (chart values audit.enabled and audit.fix, server flags
// --audit-interval and --audit-fix) under the chart's RBAC: a Deployment
// restarted with kubectl rollout restart and applied again loses its
// orphaned restartedAt at the next audit, with a log line, a Normal event
// AuditFixed and apply_hygiene_audit_fixes_total; without the chart's
// patch rule (audit.fix=false) the same fix is forbidden and the object
// is left as it is. Package off runs the chart's default, audit.fix off.
package auditfixserver_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// auditResources is the --audit-resources that the chart renders for the
// default kinds (test/chart holds the flag equal to the ClusterRole's
// list and patch rules).
const auditResources = "apps/v1/deployments,apps/v1/statefulsets,apps/v1/daemonsets"

// fixValues are the chart values of the server's flags below, and
// orphaned-field's auditFix knob, without which the audit fix leaves
// orphans (action warn) alone.
var fixValues = []string{"audit.enabled=true", "audit.fix=true", "policy.rules.orphaned-field.auditFix=true"}

func TestMain(m *testing.M) {
	framework.Main(m, framework.WithWebhook(fixValues...),
		framework.WithServerArgs("--audit-interval=2s", "--audit-resources="+auditResources, "--audit-fix"))
}
