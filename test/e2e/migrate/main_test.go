// Package migrate_test moves Deployments applied client-side to
// server-side apply on a real control plane with real kubectl, and checks
// what `kubectl hygiene migrate --server-side`, the built binary, prints and
// writes: after the upgrade a server-side apply deletes the fields its
// manifest dropped; without it, an applier that does not upgrade (a
// controller applying through client-go) leaves them behind. apply-hygiene
// is installed, reviewing Deployments, ConfigMaps and Secrets among the
// common kinds (chart value kinds=common): migrate's writes must draw no
// warning from it.
package migrate_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

func TestMain(m *testing.M) {
	framework.Main(m, framework.WithWebhook("kinds=common"))
}
