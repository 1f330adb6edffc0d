package webhook

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
)

// recordedEvent is one event a fakeRecorder received.
type recordedEvent struct {
	Object, Type, Reason, Action, Note string
}

// fakeRecorder collects events; the webhook sends them from goroutines.
type fakeRecorder struct {
	mu     sync.Mutex
	events []recordedEvent
	sent   chan struct{}
}

func newFakeRecorder() *fakeRecorder { return &fakeRecorder{sent: make(chan struct{}, 100)} }

func (f *fakeRecorder) Eventf(regarding, _ runtime.Object, eventtype, reason, action, note string, args ...any) {
	u := regarding.(*unstructured.Unstructured)
	f.mu.Lock()
	f.events = append(f.events, recordedEvent{
		Object: fmt.Sprintf("%s %s/%s uid=%s", u.GetKind(), u.GetNamespace(), u.GetName(), u.GetUID()),
		Type:   eventtype, Reason: reason, Action: action, Note: fmt.Sprintf(note, args...),
	})
	f.mu.Unlock()
	f.sent <- struct{}{}
}

// wait returns the events once n have been sent, and fails after a
// second more without another one.
func (f *fakeRecorder) wait(t *testing.T, n int) []recordedEvent {
	t.Helper()
	for range n {
		select {
		case <-f.sent:
		case <-time.After(5 * time.Second):
			t.Fatalf("waited 5s for event %d of %d", len(f.events)+1, n)
		}
	}
	select {
	case <-f.sent:
		t.Errorf("an event beyond the %d wanted was recorded", n)
	case <-time.After(100 * time.Millisecond):
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recordedEvent(nil), f.events...)
}

// Each review of a captured request returns its audit annotations, and
// the validating pass records a Warning event per rule that denied or
// warned, whose note is the message kubectl printed (never the mutating
// pass, never for a dry run).
func TestAuditAnnotationsAndEventsOnCapturedReviews(t *testing.T) {
	tests := map[string]struct {
		review           string
		dryRun           bool
		validate, mutate map[string]string
		wantReasons      []string // reason of each event, sorted
	}{
		"a create is not reviewed: no annotations": {review: "deployment-apply-create"},
		"kubectl set image is denied": {
			review:      "deployment-set-image",
			validate:    map[string]string{"rule": "imperative-edit", "action": "deny", "classification": "imperative"},
			wantReasons: []string{"ImperativeEdit"},
		},
		"a dry run of kubectl set image is annotated but leaves no event": {
			review: "deployment-set-image", dryRun: true,
			validate: map[string]string{"rule": "imperative-edit", "action": "deny", "classification": "imperative"},
		},
		"an apply that passes is annotated allow by both passes": {
			review:   "deployment-apply",
			validate: map[string]string{"action": "allow", "classification": "client-side-apply"},
			mutate:   map[string]string{"action": "allow", "classification": "client-side-apply"},
		},
		"an apply after a restart warns of the orphan": {
			review:      "deployment-apply-after-restart",
			validate:    map[string]string{"rule": "orphaned-field", "action": "warn", "classification": "client-side-apply"},
			mutate:      map[string]string{"action": "allow", "classification": "client-side-apply"},
			wantReasons: []string{"OrphanedField"},
		},
		"seed 004's apply after the undo warns twice, one event per rule": {
			review:      "statefulset-apply-after-undo",
			validate:    map[string]string{"rule": "apply-reverts-drift,orphaned-field", "action": "warn,warn", "classification": "client-side-apply"},
			mutate:      map[string]string{"action": "allow", "classification": "client-side-apply"},
			wantReasons: []string{"ApplyRevertsDrift", "OrphanedField"},
		},
		"a rollout undo is repaired by the mutating pass, with no event": {
			review:   "deployment-rollout-undo",
			validate: map[string]string{"action": "allow", "classification": "rollout-undo"},
			mutate:   map[string]string{"rule": "stale-last-applied", "action": "repair", "classification": "rollout-undo"},
		},
		"rollout restart passes": {
			review:   "deployment-rollout-restart",
			validate: map[string]string{"action": "allow", "classification": "rollout-restart"},
		},
	}
	engine := newEngine(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := loadReview(t, tc.review)
			req.DryRun = &tc.dryRun
			rec := newFakeRecorder()
			r := NewReviewer(engine, loadCluster(t, filepath.Join("testdata", "reviews", tc.review+".cluster.json")), WithEventRecorder(rec))
			validating := r.Validating().Handle(t.Context(), req)
			mutating := r.Mutating().Handle(t.Context(), req)
			if diff := cmp.Diff(tc.validate, validating.AuditAnnotations); diff != "" {
				t.Errorf("validating audit annotations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.mutate, mutating.AuditAnnotations); diff != "" {
				t.Errorf("mutating audit annotations (-want +got):\n%s", diff)
			}
			messages := append([]string(nil), validating.Warnings...)
			if !validating.Allowed {
				messages = append(messages, validating.Result.Message)
			}
			var reasons []string
			for _, e := range rec.wait(t, len(tc.wantReasons)) {
				reasons = append(reasons, e.Reason)
				wantObject := fmt.Sprintf("%s %s/%s uid=%s", req.Kind.Kind, req.Namespace, req.Name, objectUID(t, req.Object.Raw))
				if e.Type != "Warning" || e.Action != EventAction || e.Object != wantObject || !slices.Contains(messages, e.Note) {
					t.Errorf("event %+v: want type Warning, action %s, object %s, a note among %q", e, EventAction, wantObject, messages)
				}
			}
			sort.Strings(reasons)
			if diff := cmp.Diff(tc.wantReasons, reasons); diff != "" {
				t.Errorf("event reasons (-want +got):\n%s", diff)
			}
		})
	}
}

func objectUID(t *testing.T, raw []byte) string {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		t.Fatalf("decoding the object: %v", err)
	}
	return string(obj.GetUID())
}

// A second write within the interval records no second event for the
// same object and rule; the answer is the same.
func TestEventsAreRateLimitedPerObjectAndRule(t *testing.T) {
	req := loadReview(t, "deployment-set-image")
	rec := newFakeRecorder()
	r := NewReviewer(newEngine(t), loadCluster(t, filepath.Join("testdata", "reviews", "deployment-set-image.cluster.json")), WithEventRecorder(rec))
	for i := range 3 {
		if resp := r.Validating().Handle(t.Context(), req); resp.Allowed {
			t.Fatalf("write %d was allowed, want the denial", i+1)
		}
	}
	if got := rec.wait(t, 1); len(got) != 1 || got[0].Reason != "ImperativeEdit" {
		t.Errorf("events after 3 denied writes = %+v, want one ImperativeEdit", got)
	}
}

// A recorder that blocks never holds a review: past maxEventsInFlight
// events waiting, the rest are dropped.
func TestABlockedRecorderNeverHoldsAReview(t *testing.T) {
	blocked := &blockingRecorder{release: make(chan struct{})}
	defer close(blocked.release)
	e := newEventRecorder(blocked, time.Minute)
	req := loadReview(t, "deployment-set-image")
	r := NewReviewer(newEngine(t), loadCluster(t, filepath.Join("testdata", "reviews", "deployment-set-image.cluster.json")))
	rv, err := r.core.Review(t.Context(), &req.AdmissionRequest, review.Validate)
	if err != nil {
		t.Fatalf("review: %v", err)
	}
	sent := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 2 * maxEventsInFlight {
			rv.New.SetUID(types.UID(fmt.Sprint("uid-", i)))
			sent += e.record(rv, rv.Decisions)
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("recording events waited for a blocked recorder")
	}
	if sent != maxEventsInFlight {
		t.Errorf("%d events handed to a blocked recorder, want %d (the rest dropped)", sent, maxEventsInFlight)
	}
}

type blockingRecorder struct{ release chan struct{} }

func (b *blockingRecorder) Eventf(runtime.Object, runtime.Object, string, string, string, string, ...any) {
	<-b.release
}
