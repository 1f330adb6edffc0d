// Package autoscaler_test asserts, through real kubectl output, the
// autoscaler-aware replicas (issue 18 item 2): replicas-autoscaled warns
// about (or denies) an apply whose manifest sets replicas while a
// HorizontalPodAutoscaler scales the Deployment, naming the autoscaler and
// its desired count, and replicas-reset's repair action keeps the live
// count when the manifest drops replicas, so that neither that apply nor
// the next resets it. The control plane runs kube-controller-manager's
// HPA controller; it has no metrics API, so the controller computes no
// utilization, but it scales a Deployment below minReplicas up to it.
// apply-hygiene is installed from the chart (url mode) with the server
// running as the chart's service account, whose RBAC lists and watches
// the autoscalers.
package autoscaler_test

import (
	"slices"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

func TestMain(m *testing.M) {
	framework.Main(m,
		framework.WithControllers(append(slices.Clone(controlplane.DefaultControllers), "horizontal-pod-autoscaler-controller")...),
		framework.WithWebhook())
}
