// Package merge_test is the differential test of package merge: scenarios
// applied with the real kubectl to a real API server, where merge's
// prediction of every `kubectl apply` must equal what the server stored.
// It also holds the generator of the captured seed 004 fixtures (run with
// -capture, see testdata/README.md).
package merge_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

func TestMain(m *testing.M) { framework.Main(m) }
