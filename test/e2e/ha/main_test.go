// Package ha_test runs apply-hygiene as two replicas behind one address
// (devenv.LoadBalancer, the local stand-in for the chart's Service: new
// connections go only to replicas whose /readyz passes) with failurePolicy
// Fail, and loses one replica at a time while 8 clients apply: killed with
// SIGKILL as a crash or an OOM kill would, and replaced one by one as a
// rolling upgrade does (SIGTERM, graceful shutdown, a new process). The
// kills run once more under the chart's default failurePolicy Ignore.
//
// The runs make 1,000 applies each; APPLY_HYGIENE_HA_APPLIES sets another
// number for the long runs of docs/reliability.md.
package ha_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// shutdownDelay is the replicas' --shutdown-delay: five probe periods of
// the load balancer, as the chart's 5s is several of the EndpointSlice
// propagation.
const shutdownDelay = "1s"

func TestMain(m *testing.M) {
	framework.Main(m, framework.WithWebhook("failurePolicy=Fail"), framework.WithReplicas(2),
		framework.WithServerArgs("--shutdown-delay="+shutdownDelay))
}
