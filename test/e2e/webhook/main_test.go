// Package webhook_test is the "after" picture: the seed scenarios with
// apply-hygiene installed from the chart (url mode) and the server running
// with the chart's service account, asserted through real kubectl output.
package webhook_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// breakGlassGroup is configured as the chart's policy.breakGlassGroups.
const breakGlassGroup = "apply-hygiene:break-glass"

func TestMain(m *testing.M) {
	framework.Main(m, framework.WithWebhook("policy.breakGlassGroups={"+breakGlassGroup+"}"))
}
