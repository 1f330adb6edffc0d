package audit

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// panicsOn panics evaluating the object named name and asks next for the
// others.
type panicsOn struct {
	name string
	next Evaluator
}

func (p panicsOn) Evaluate(ctx context.Context, in *policy.Input) ([]policy.Decision, error) {
	if in.Request.Object.Name == p.name {
		panic("boom")
	}
	return p.next.Evaluate(ctx, in)
}

// TestScanGoesOnPastAnObjectThatPanics: a panic while one object is
// analyzed or evaluated ended the process, the webhook server's with it
// (the audit runs in the server); it is that object's error in the report
// and the scan goes on with the others.
func TestScanGoesOnPastAnObjectThatPanics(t *testing.T) {
	edited, clean := readObjects(t, "deployments/edited.yaml")[0], readObjects(t, "deployments/clean.yaml")[0]
	clean.SetName("api")
	objs := []*unstructured.Unstructured{namespaceObject("shop", nil), edited, clean}
	names := []string{edited.GetName(), clean.GetName()}
	report, err := NewScanner(newFakeClient(objs...), testAnalyzer(t), panicsOn{name: names[0], next: testEngine(t)}).Scan(t.Context(), Target{})
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Errors) != 1 || report.Errors[0].Object.Name != names[0] || report.Errors[0].Err.Error() != "panic: boom [recovered]" {
		t.Fatalf("errors %v, want the one of %s: panic: boom [recovered]", report.Errors, names[0])
	}
	if report.Objects != 2 {
		t.Errorf("%d objects scanned, want 2", report.Objects)
	}
}

// panickingPublisher panics publishing a report.
type panickingPublisher struct{}

func (panickingPublisher) Publish(context.Context, *Report, time.Time) error { panic("boom") }

// TestRunnerScanThatPanicsIsAFailedScan: a panic of a scan outside one
// object's analysis (here the report's publisher) is the scan's error,
// logged and retried as any failed scan, never the end of the server.
func TestRunnerScanThatPanicsIsAFailedScan(t *testing.T) {
	client := newFakeClient(append(readObjects(t, "deployments/clean.yaml"), namespaceObject("shop", nil))...)
	r, err := NewRunner(NewScanner(client, testAnalyzer(t), testEngine(t)), RunnerOptions{Publisher: panickingPublisher{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.scanOrRecover(t.Context(), time.Now()); err == nil || err.Error() != "panic: boom [recovered]" {
		t.Fatalf("the scan's error: %v, want panic: boom [recovered]", err)
	}
}
