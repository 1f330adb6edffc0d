// Package node_test runs apply-hygiene as users run it: on a real node
// (hack/node: kubelet, containerd, kube-proxy, kube-scheduler), the image
// of make image loaded with ctr, the chart installed with helm exactly as
// docs/install.md says (service mode, self-managed TLS), and the API
// server calling the webhook through the chart's Service. It needs root
// and cgroups, and skips naming what is missing; make node-tools and make
// image provide the rest.
package node_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

func TestMain(m *testing.M) {
	framework.Main(m, framework.WithNode())
}
