// Package callcount_test counts the webhook calls the API server makes for
// the writes of the real kube-controller-manager and of a controller of
// one's own, kind by kind, with the chart's kinds=common preset: with the
// chart's matchConditions, and with them removed from the webhook
// configurations. Issue 15 item 4: the count is 0 where no rule can act.
package callcount_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// controllers are the default ones plus every controller that writes the
// common kinds or reacts to them.
var controllers = append([]string{
	"cronjob-controller",
	"disruption-controller",
	"endpoints-controller",
	"endpointslice-controller",
	"endpointslice-mirroring-controller",
	"horizontal-pod-autoscaler-controller",
	"job-controller",
	"root-ca-certificate-publisher-controller",
	"ttl-after-finished-controller",
}, controlplane.DefaultControllers...)

func TestMain(m *testing.M) {
	framework.Main(m, framework.WithWebhook("kinds=common"), framework.WithControllers(controllers...))
}
