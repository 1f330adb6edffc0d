package realworld_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// TestMain starts the control plane with apply-hygiene installed from the
// chart with its default values: the corpus measures what a new user gets.
func TestMain(m *testing.M) { framework.Main(m, framework.WithWebhook()) }
