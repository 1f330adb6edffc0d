// Package kinds_test proves apply-hygiene on every built-in kind that
// people kubectl apply beyond apps/v1 (issue 15): the chart installed with
// kinds=common, real kubectl against a real API server, and for each kind
// the imperative edit that is denied, the orphan and the revert that the
// applies warn about, each apply predicted exactly by kubectl hygiene
// diff, and kubectl hygiene explain and audit on the object.
package kinds_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// breakGlassGroup is configured as the chart's policy.breakGlassGroups:
// its members' imperative edits are warned about, not denied, which is how
// the tests make a field drift.
const breakGlassGroup = "apply-hygiene:break-glass"

func TestMain(m *testing.M) {
	framework.Main(m, framework.WithWebhook("kinds=common", "policy.breakGlassGroups={"+breakGlassGroup+"}"))
}
