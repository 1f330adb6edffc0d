package realworld_test

import (
	"fmt"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// TestRealWorld takes every workload of the corpus through its day, plus a
// Helm release and a never-applied Deployment, in parallel, then reports
// every false warning, false denial and miss, and prints the summary line.
func TestRealWorld(t *testing.T) {
	framework.ControlPlane(t)
	ws := loadCorpus(t)
	var lg ledger
	t.Run("day", func(t *testing.T) {
		for _, w := range ws {
			t.Run(w.id(), func(t *testing.T) {
				t.Parallel()
				liveDay(t, w, &lg)
			})
		}
		t.Run("helm", func(t *testing.T) {
			t.Parallel()
			helmRelease(t, &lg)
		})
		t.Run("imperative", func(t *testing.T) {
			t.Parallel()
			imperativeUse(t, &lg)
		})
	})
	lg.report(t)
	summary := lg.summary()
	t.Log(summary)
	fmt.Println(summary)
}
