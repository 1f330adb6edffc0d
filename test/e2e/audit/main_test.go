// Package audit_test runs apply-hygiene's audit end to end on one real
// control plane, in two halves.
//
// Without apply-hygiene installed (no webhook, so the drift stays), the
// tests plant drift among many clean objects and check that `kubectl
// hygiene audit`, the built binary, finds exactly what was planted, that
// `kubectl hygiene explain` reads the cluster, and that `kubectl hygiene
// audit --fix` fixes drift made as it is in a cluster where apply-hygiene
// was installed later: a rollout undo that left last-applied stale (seed
// 004's StatefulSet, and a Deployment), a rollout restart's restartedAt
// that apply never removes, and a change made between the audit's read
// and its write.
//
// Then three groups install the chart and run the server's periodic audit
// (chart value audit.enabled, --audit-interval) with the chart's RBAC,
// each configured its own way (framework.UseWebhook) and uninstalled when
// it ends:
//   - TestAuditFixServer, with the opt-in fixes (audit.fix,
//     --audit-fix): a Deployment restarted with kubectl rollout restart
//     and applied again loses its orphaned restartedAt at the next audit,
//     with a log line, a Normal event AuditFixed and
//     apply_hygiene_audit_fixes_total; without the chart's patch rule
//     (audit.fix=false) the same fix is forbidden and the object is left
//     as it is.
//   - TestAuditFixServerOff, with the chart's default audit.fix (off: no
//     --audit-fix, no patch rule but removalProofs' dry-run-only one): the
//     same Deployment keeps its orphaned restartedAt, and the finding
//     stays, as a Warning event and in the gauge.
//   - TestAuditServer, with kinds=common: drift that admission never saw
//     becomes a gauge and a Warning event, on every kind of the preset.
//
// The tests without the webhook come first: Go runs a package's tests in
// the order of its files' names, and the groups are in server_test.go,
// their tests in server_*_test.go. TestAuditFindsPlantedDrift audits
// every namespace and wants no finding outside its own.
package audit_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

func TestMain(m *testing.M) {
	framework.Main(m)
}
