package generative_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// TestMain starts the control plane with the controllers the sequences
// need (Deployments, StatefulSets and DaemonSets with their revisions, the
// garbage collector that finishes deletions, the service accounts'
// tokens) and apply-hygiene from the chart with the common kinds under
// failurePolicy Fail (every error the webhook answers fails a write) and
// the periodic audit fixing every auditInterval (audit.fix), with
// orphaned-field's findings opted in (policy.rules.orphaned-field.auditFix)
// and only on the objects labelled fixLabel (periodic_test.go).
func TestMain(m *testing.M) {
	framework.Main(m,
		framework.WithControllers(
			"deployment-controller", "replicaset-controller", "statefulset-controller",
			"daemonset-controller", "garbage-collector-controller", "serviceaccount-controller",
			"namespace-controller", "clusterrole-aggregation-controller",
			"horizontal-pod-autoscaler-controller",
		),
		framework.WithWebhook("kinds=common", "failurePolicy=Fail", "audit.enabled=true", "audit.fix=true", "policy.rules.orphaned-field.auditFix=true",
			// bob's undos get no repair at admission (exemptUndo).
			"policy.exemptions.users={bob}"),
		// The periodic audit with its fixes runs during the sequences:
		// apply-hygiene's own writes are judged (periodic_test.go). Its
		// --object-selector is narrower than the webhooks' (none): it
		// fixes the labelled objects only, the webhooks review every one.
		framework.WithServerArgs("--audit-interval="+auditInterval.String(), "--audit-resources=apps/v1/deployments,apps/v1/statefulsets,apps/v1/daemonsets", "--audit-fix",
			"--object-selector="+fixSelector),
	)
}
