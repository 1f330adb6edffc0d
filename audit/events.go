package audit

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apply-hygiene/apply-hygiene/internal/events"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// EventRecorder records events on objects (internal/events' Recorder):
// the events.k8s.io recorder of client-go (k8s.io/client-go/tools/events)
// and controller-runtime's manager.GetEventRecorder are ones.
type EventRecorder = events.Recorder

// EventAction is the action of the events the audit records.
const EventAction = "Audit"

// maxNote is the longest note the events API accepts, in bytes.
const maxNote = events.MaxNote

// eventKey is one rule on one object.
type eventKey struct {
	uid  types.UID
	rule policy.RuleID
}

// eventLimiter records at most one event per object and rule per
// interval (events.Limiter, shared with the admission webhook), and at
// most budget events per run.
type eventLimiter struct {
	recorder EventRecorder
	budget   int
	limiter  *events.Limiter
}

// newEventLimiter limits to the interval less a tenth, so that runs an
// interval apart are not held back by how long each scan took.
func newEventLimiter(recorder EventRecorder, interval time.Duration, budget int) *eventLimiter {
	return &eventLimiter{recorder: recorder, budget: budget, limiter: events.NewLimiter(interval - interval/10)}
}

// record sends the events of one report and returns how many it sent.
func (l *eventLimiter) record(r *Report, now time.Time) int {
	if l == nil || l.recorder == nil {
		return 0
	}
	n := 0
	for _, f := range firstPerObjectAndRule(r.Findings) {
		if n >= l.budget {
			break
		}
		if !l.limiter.Allow(events.Key{UID: f.UID, Rule: string(f.Rule)}, now) {
			continue
		}
		l.recorder.Eventf(events.Regarding(f.Object.APIVersion, f.Object.Kind, f.Object.Namespace, f.Object.Name, f.UID), nil, corev1.EventTypeWarning, EventReason(f.Rule), EventAction, "%s", truncate(f.Message, maxNote))
		n++
	}
	return n
}

// firstPerObjectAndRule keeps the first finding of each object and rule.
func firstPerObjectAndRule(fs []Finding) []Finding {
	seen := map[eventKey]bool{}
	var out []Finding
	for _, f := range fs {
		key := eventKey{uid: f.UID, rule: f.Rule}
		if f.UID == "" || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, f)
	}
	return out
}

// truncate cuts s to at most n bytes of valid UTF-8, ending with "…".
func truncate(s string, n int) string { return events.Truncate(s, n) }
