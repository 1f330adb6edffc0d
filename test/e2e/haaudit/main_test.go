// Package haaudit_test runs the periodic audit in two replicas with the
// chart's RBAC and short leader-election timings, and hands the audit
// over: another replica takes the leader lease within the lease duration
// when the leader is killed, at once when it shuts down, and the audit
// still runs exactly once per interval across the replicas (the schedule
// Lease), with one event per interval and the findings exported by the
// replica that audits, which also publishes the namespace's one
// OpenReports Report. The leader makes the chart's ConfigMap the owner of
// both Leases, and a leader whose Role is gone says so in one line.
package haaudit_test

import (
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

const (
	interval      = 8 * time.Second
	leaseDuration = 4 * time.Second
	retryPeriod   = time.Second
	// configMap is the chart's configuration, the audit Leases' owner.
	configMap = "apply-hygiene-config"
)

func TestMain(m *testing.M) {
	framework.Main(m, framework.WithWebhook("audit.enabled=true", "audit.reports.format=openreports"), framework.WithReplicas(2),
		framework.WithServerArgs("--audit-interval="+interval.String(),
			"--leader-election-lease-duration="+leaseDuration.String(),
			"--leader-election-renew-deadline=3s",
			"--leader-election-retry-period="+retryPeriod.String(),
			"--shutdown-delay=0s", "--reports-format=openreports",
			// As the chart passes it: helm uninstall deletes the ConfigMap,
			// and the garbage collector the audit's Leases.
			"--lease-owner-configmap="+configMap))
}
