package webhook

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/apply-hygiene/apply-hygiene/internal/events"
	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// EventRecorder records events on objects (internal/events' Recorder):
// the events.k8s.io recorder of client-go (k8s.io/client-go/tools/events)
// and controller-runtime's manager.GetEventRecorder are ones.
type EventRecorder = events.Recorder

// EventAction is the action of the events the webhook records.
const EventAction = "Admission"

// DefaultEventInterval is how often at most one object gets an event for
// one rule.
const DefaultEventInterval = time.Minute

// maxEventsInFlight bounds the events being handed to the recorder at
// once; past it an event is dropped rather than held.
const maxEventsInFlight = 64

// eventRecorder records the events of the validating pass's warn and deny
// decisions, off the review's path: at most one per object and rule per
// interval, never for a dry run, and never blocking a review.
type eventRecorder struct {
	recorder EventRecorder
	limiter  *events.Limiter
	inFlight chan struct{}
	now      func() time.Time
}

func newEventRecorder(recorder EventRecorder, interval time.Duration) *eventRecorder {
	if recorder == nil {
		return nil
	}
	return &eventRecorder{
		recorder: recorder,
		limiter:  events.NewLimiter(interval),
		inFlight: make(chan struct{}, maxEventsInFlight),
		now:      time.Now,
	}
}

// record sends one Warning event for each rule of decisions on the
// reviewed object, unless the request is a dry run. It returns how many
// it handed to the recorder.
func (e *eventRecorder) record(rv *review.Review, decisions []policy.Decision) int {
	if e == nil || len(decisions) == 0 || rv.Input.Request.DryRun || rv.New == nil || rv.New.GetUID() == "" {
		return 0
	}
	obj := events.Regarding(rv.New.GetAPIVersion(), rv.New.GetKind(), rv.New.GetNamespace(), rv.New.GetName(), rv.New.GetUID())
	now := e.now()
	n := 0
	for _, d := range decisions {
		if !e.limiter.Allow(events.Key{UID: obj.GetUID(), Rule: string(d.Rule)}, now) {
			continue
		}
		select {
		case e.inFlight <- struct{}{}:
		default:
			continue // the recorder is behind: drop the event rather than wait.
		}
		reason, note := events.Reason(string(d.Rule)), events.Truncate(d.Message, events.MaxNote)
		go func() {
			defer func() { <-e.inFlight }()
			e.recorder.Eventf(obj, nil, corev1.EventTypeWarning, reason, EventAction, "%s", note)
		}()
		n++
	}
	return n
}
