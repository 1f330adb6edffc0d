// Package auditfix_test runs `kubectl hygiene audit --fix`, the built
// binary, on a real control plane without apply-hygiene, so that the
// drift it fixes is made as it is in a cluster where apply-hygiene was
// installed later: a rollout undo that left last-applied stale (seed 004's
// StatefulSet, and a Deployment), a rollout restart's restartedAt that
// apply never removes, and a change made between the audit's read and its
// write.
package auditfix_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

func TestMain(m *testing.M) {
	framework.Main(m)
}
