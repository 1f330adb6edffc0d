package realworld_test

import (
	"fmt"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// TestRealWorld takes every workload of the corpus through its day, every
// object of another kind picked by loadOthers through otherDay, plus a
// Helm release and a never-applied Deployment, in parallel, then reports
// every false warning, false denial and miss, and prints the summary line.
// Before every apply of a day, kubectl hygiene diff predicts what the apply
// will print (framework.Predictor).
func TestRealWorld(t *testing.T) {
	framework.ControlPlane(t)
	ws := loadCorpus(t)
	others := loadOthers(t)
	crds := crdsByKind(others)
	var lg ledger
	p := framework.NewPredictor(t)
	t.Run("day", func(t *testing.T) {
		for _, w := range ws {
			t.Run(w.id(), func(t *testing.T) {
				t.Parallel()
				liveDay(t, w, &lg, p)
			})
		}
		// A custom resource's day runs inside its CRD's, after it: one
		// waiting in a parallel slot of its own for a CRD whose day had no
		// slot yet held up to both slots of a 2-core run (fresh-clone CI
		// of 2026-11-29: Foo timed out after two minutes waiting for
		// foos.samplecontroller.k8s.io).
		custom := customResourcesByCRD(others, crds)
		for _, o := range others {
			if _, ok := crds[o.kindKey()]; ok {
				continue
			}
			t.Run(o.id(), func(t *testing.T) {
				t.Parallel()
				otherLife(t, o, crds, &lg, p)
				if o.kind != crdKind {
					return
				}
				for _, cr := range custom[o.name] {
					t.Run(cr.id(), func(t *testing.T) { otherLife(t, cr, crds, &lg, p) })
				}
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
	summary := lg.summary() + "\nrealworld: " + p.Summary()
	t.Log(summary)
	fmt.Println(summary)
	framework.WriteReport(t, "realworld.txt", summary)
	if p.Messages() == 0 {
		t.Error("no apply printed any message of apply-hygiene: the predictions compared nothing")
	}
}
