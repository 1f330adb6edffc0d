// Package crd_test checks custom resources analyzed with their CRD's
// structural schema, read by the server from the API server's OpenAPI v3
// (issue 15, item 2): facts inside a list-map name the element, and a
// changed CRD is used without a restart. apply-hygiene is installed from
// the chart (url mode) with the Route resource as an extraKinds entry, and
// the server runs with the chart's service account: reading /openapi/v3
// needs no RBAC of its own.
package crd_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

func TestMain(m *testing.M) {
	framework.Main(m, framework.WithWebhook(
		"extraKinds[0].group=example.com", "extraKinds[0].version=v1", "extraKinds[0].resource=routes"))
}
