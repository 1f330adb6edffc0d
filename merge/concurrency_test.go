package merge

import (
	"sync"
	"testing"
)

// TestAnalyzerConcurrentUse shares one Analyzer between goroutines, as the
// webhook does; run it with -race.
func TestAnalyzerConcurrentUse(t *testing.T) {
	a := NewAnalyzer()
	dirs := []string{"seed004-undo", "seed003-restarted-at", "crd-json-merge", "statefulset-ondelete"}
	var wg sync.WaitGroup
	for i := range 8 {
		f := loadFixture(t, dirs[i%len(dirs)])
		wg.Go(func() {
			for range 5 {
				if _, _, err := a.predictApply(f.live, f.modified); err != nil {
					t.Error(err)
				}
				if _, err := a.Explain(f.live); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkAnalyzeApply(b *testing.B) {
	a := NewAnalyzer()
	live := mustYAML(b, mustRead(b, "seed004-undo/live.yaml"))
	manifest := mustYAML(b, mustRead(b, "seed004-undo/modified.yaml"))
	for b.Loop() {
		if _, _, err := a.predictApply(live, manifest); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewAnalyzerAndExplain(b *testing.B) {
	live := mustYAML(b, mustRead(b, "seed004-undo/live.yaml"))
	for b.Loop() {
		if _, err := NewAnalyzer().Explain(live); err != nil {
			b.Fatal(err)
		}
	}
}

func mustRead(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := testdata.ReadFile("testdata/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
