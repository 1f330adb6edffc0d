package events

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Key is one rule on one object.
type Key struct {
	// UID is the object's UID.
	UID types.UID
	// Rule is the rule's ID.
	Rule string
}

// Limiter lets at most one event per Key through per gap. It is safe for
// concurrent use, and forgets what no longer limits anything, so that
// deleted objects do not stay in memory.
type Limiter struct {
	gap time.Duration

	mu    sync.Mutex
	sent  map[Key]time.Time
	swept time.Time
}

// NewLimiter returns a Limiter that lets one event per Key through per gap.
func NewLimiter(gap time.Duration) *Limiter {
	return &Limiter{gap: gap, sent: map[Key]time.Time{}}
}

// Allow reports whether an event for key may be sent at now, and if so
// counts it as sent.
func (l *Limiter) Allow(key Key, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	if last, ok := l.sent[key]; ok && now.Sub(last) < l.gap {
		return false
	}
	l.sent[key] = now
	return true
}

// Len returns how many keys the Limiter holds back now or may still hold
// back later.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sent)
}

// sweep drops the keys whose gap has passed, at most once per gap, so
// that Allow stays cheap with many keys.
func (l *Limiter) sweep(now time.Time) {
	if now.Sub(l.swept) < l.gap {
		return
	}
	l.swept = now
	for key, last := range l.sent {
		if now.Sub(last) >= l.gap {
			delete(l.sent, key)
		}
	}
}
