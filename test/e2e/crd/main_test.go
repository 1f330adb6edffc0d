// Package crd_test checks custom resources analyzed with their CRD's
// structural schema, read by the server from the API server's OpenAPI v3
// (issue 15, item 2): facts inside a list-map name the element, and a
// changed CRD is used without a restart; and the /scale of a custom
// resource sets the field its CRD's specReplicasPath names. apply-hygiene
// is installed from the chart (url mode) with the Route resource and the
// Queue resource with its scale subresource, a Deployment of example.com
// (a kind named like apps's) and Argo Rollouts' Rollout as extraKinds
// entries, and the
// server runs with the chart's service account: reading /openapi/v3 needs
// no RBAC of its own, reading the Queue CRD the chart's get by name.
package crd_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

func TestMain(m *testing.M) {
	framework.Main(m, framework.WithWebhook(
		"extraKinds[0].group=example.com", "extraKinds[0].version=v1", "extraKinds[0].resource=routes",
		"extraKinds[1].group=example.com", "extraKinds[1].version=v1", "extraKinds[1].resource=queues", "extraKinds[1].subresources={scale}",
		"extraKinds[2].group=example.com", "extraKinds[2].version=v1", "extraKinds[2].resource=deployments",
		"extraKinds[3].group=argoproj.io", "extraKinds[3].version=v1alpha1", "extraKinds[3].resource=rollouts"))
}
