// Package audit_test plants drift among many clean objects on a real
// control plane without apply-hygiene (no webhook, so the drift stays),
// and checks that `kubectl hygiene audit`, the built binary, finds exactly
// what was planted, and that `kubectl hygiene explain` reads the cluster.
package audit_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

func TestMain(m *testing.M) {
	framework.Main(m)
}
