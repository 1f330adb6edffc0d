package audit

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	testingclock "k8s.io/utils/clock/testing"
)

// recorder keeps the events it is asked to record, as
// "<type> <reason> <action> <kind> <namespace>/<name>: <note>".
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Eventf(regarding runtime.Object, _ runtime.Object, eventtype, reason, action, note string, args ...any) {
	obj := regarding.(*unstructured.Unstructured)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("%s %s %s %s %s/%s(%s): %s", eventtype, reason, action, obj.GetKind(), obj.GetNamespace(), obj.GetName(), obj.GetUID(), fmt.Sprintf(note, args...)))
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	sort.Strings(out)
	return out
}

// summary cuts each event after the object.
func summary(events []string) []string {
	out := []string{}
	for _, e := range events {
		head, _, _ := strings.Cut(e, ": ")
		out = append(out, head)
	}
	return out
}

// gauges returns the audit findings gauge as "rule namespace value".
func gauges(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, mf := range families {
		if mf.GetName() != "apply_hygiene_audit_findings" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			out = append(out, fmt.Sprintf("%s %s %g", labels["rule"], labels["namespace"], m.GetGauge().GetValue()))
		}
	}
	sort.Strings(out)
	return out
}

// twoDrifted returns an edited Deployment web and a created one made.
func twoDrifted(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	edited := readObjects(t, "deployments/edited.yaml")
	created := readObjects(t, "deployments/created.yaml")[0]
	created.SetName("made")
	created.SetUID("uid-made")
	return append(edited, created)
}

func TestRunnerExportsGaugesAndRateLimitedEvents(t *testing.T) {
	client := newFakeClient(twoDrifted(t)...)
	reg := prometheus.NewRegistry()
	rec := &recorder{}
	r, err := NewRunner(NewScanner(client, testAnalyzer(t), testEngine(t)), RunnerOptions{Registry: reg, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(t0)
	r.clock = clk
	steps := []struct {
		at     time.Duration
		before func()
		events []string
		gauges []string
	}{{
		at: 0,
		events: []string{
			"Warning ImperativeEdit Audit Deployment shop/web(uid-web)",
			"Warning MissingLastApplied Audit Deployment shop/made(uid-made)",
		},
		gauges: []string{"imperative-edit shop 1", "missing-last-applied shop 1"},
	}, {
		// Within the interval: the same findings, no new events.
		at:     10 * time.Minute,
		events: []string{},
		gauges: []string{"imperative-edit shop 1", "missing-last-applied shop 1"},
	}, {
		// A run an interval later (less a scan's duration) records again;
		// the fixed Deployment leaves the gauge.
		at: 58 * time.Minute,
		before: func() {
			gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
			if err := client.Tracker().Delete(gvr, "shop", "web"); err != nil {
				t.Fatal(err)
			}
		},
		events: []string{"Warning MissingLastApplied Audit Deployment shop/made(uid-made)"},
		gauges: []string{"missing-last-applied shop 1"},
	}}
	for _, step := range steps {
		if step.before != nil {
			step.before()
		}
		clk.SetTime(t0.Add(step.at))
		if _, err := r.RunOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(step.events, summary(rec.take())); diff != "" {
			t.Errorf("after %v: events (-want +got):\n%s", step.at, diff)
		}
		if diff := cmp.Diff(step.gauges, gauges(t, reg)); diff != "" {
			t.Errorf("after %v: gauges (-want +got):\n%s", step.at, diff)
		}
	}
}

func TestRunnerEventBudgetAndNote(t *testing.T) {
	client := newFakeClient(twoDrifted(t)...)
	rec := &recorder{}
	r, err := NewRunner(NewScanner(client, testAnalyzer(t), testEngine(t)), RunnerOptions{Recorder: rec, EventBudget: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	events := rec.take()
	if len(events) != 1 {
		t.Fatalf("events = %v, want one within the budget", events)
	}
	want := "Warning MissingLastApplied Audit Deployment shop/made(uid-made): [missing-last-applied] Deployment shop/made: the object has no"
	if !strings.HasPrefix(events[0], want) {
		t.Errorf("event = %q\nwant prefix %q", events[0], want)
	}
	// The next run spends its budget on what the last one left out.
	if _, err := r.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Warning ImperativeEdit Audit Deployment shop/web(uid-web)"}, summary(rec.take())); diff != "" {
		t.Errorf("second run (-want +got):\n%s", diff)
	}
}

func TestRunnerStartScansAtOnceAndStopsWithTheContext(t *testing.T) {
	client := newFakeClient(twoDrifted(t)...)
	rec := &recorder{}
	r, err := NewRunner(NewScanner(client, testAnalyzer(t), testEngine(t)), RunnerOptions{Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	if !r.NeedLeaderElection() {
		t.Error("NeedLeaderElection() = false, want one replica to audit")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Start(ctx) }()
	recorded := func() int {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.events)
	}
	for deadline := time.Now().Add(10 * time.Second); recorded() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start returned %v", err)
	}
	if got := len(rec.take()); got != 2 {
		t.Errorf("first scan recorded %d events, want 2", got)
	}
}

func TestNewRunnerRegistersOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := NewScanner(newFakeClient(), testAnalyzer(t), testEngine(t))
	if _, err := NewRunner(s, RunnerOptions{Registry: reg}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewRunner(s, RunnerOptions{Registry: reg}); err == nil {
		t.Error("a second runner on the same registry: no error")
	}
}

func TestTruncate(t *testing.T) {
	tests := map[string]struct {
		in   string
		n    int
		want string
	}{
		"short text stays":                  {in: "abc", n: 5, want: "abc"},
		"long text is cut with an ellipsis": {in: "abcdefgh", n: 6, want: "abc…"},
		"a rune is never split":             {in: "ééééé", n: 6, want: "é…"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := truncate(tc.in, tc.n); got != tc.want {
				t.Errorf("truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
		})
	}
}
