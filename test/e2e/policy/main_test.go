// Package policy_test asserts, through real kubectl output, the rules that
// repair, deny and warn beyond the seeds (defaulted-dependent,
// replicas-reset, apply-reverts-drift), the namespace enforcement label,
// prune mode, server-side apply orphans, user policies from ConfigMaps and
// ownership rules (policy.ownership),
// and, under failurePolicy Fail, the everyday writes that no rule may hold
// up (a scale to zero, an apply during a rollout pause, a write to an
// object being deleted), with apply-hygiene installed from the chart (url
// mode).
package policy_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// breakGlassGroup is configured as the chart's policy.breakGlassGroups.
const breakGlassGroup = "apply-hygiene:break-glass"

// values are the chart values of the package; prune mode adds to them.
var values = []string{"policy.breakGlassGroups={" + breakGlassGroup + "}"}

func TestMain(m *testing.M) {
	framework.Main(m, framework.WithWebhook(values...))
}
