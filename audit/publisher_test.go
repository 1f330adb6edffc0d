package audit

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"
)

// The Publisher gets each report with the time the scan finished and the
// objects per namespace; its failure does not fail the run.
func TestRunnerPublishesEachReport(t *testing.T) {
	type published struct {
		findings   int
		namespaces map[string]int
		scanned    time.Time
	}
	var got []published
	fail := errors.New("the reports CRD went away")
	publisher := PublisherFunc(func(_ context.Context, r *Report, scanned time.Time) error {
		got = append(got, published{findings: len(r.Findings), namespaces: r.Namespaces, scanned: scanned})
		return fail
	})
	r, err := NewRunner(NewScanner(newFakeClient(twoDrifted(t)...), testAnalyzer(t), testEngine(t)), RunnerOptions{Publisher: publisher})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	r.clock = testingclock.NewFakeClock(t0)
	for range 2 {
		report, err := r.RunOnce(t.Context())
		if err != nil {
			t.Fatalf("RunOnce: %v, want the publisher's failure logged only", err)
		}
		if len(report.Findings) != 2 {
			t.Fatalf("findings = %+v, want 2", report.Findings)
		}
	}
	want := []published{
		{findings: 2, namespaces: map[string]int{"shop": 2}, scanned: t0},
		{findings: 2, namespaces: map[string]int{"shop": 2}, scanned: t0},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(published{})); diff != "" {
		t.Errorf("published (-want +got):\n%s", diff)
	}
}
