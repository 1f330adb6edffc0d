// Package seeds_test holds the "before" pictures: each seed's bug,
// reproduced with real kubectl against a real API server and controller
// manager, with no webhook installed. Later suites assert what changes once
// apply-hygiene is in the path.
package seeds_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

func TestMain(m *testing.M) { framework.Main(m) }
