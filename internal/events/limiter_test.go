package events_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/internal/events"
)

func TestLimiterLetsOneEventPerObjectAndRuleThroughPerGap(t *testing.T) {
	start := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	web := events.Key{UID: "uid-web", Rule: "imperative-edit"}
	type call struct {
		key   events.Key
		after time.Duration
	}
	tests := map[string]struct {
		calls []call
		want  []bool
	}{
		"a repeat within the gap is held back": {
			calls: []call{{web, 0}, {web, time.Second}, {web, 59 * time.Second}},
			want:  []bool{true, false, false},
		},
		"a repeat once the gap has passed goes through": {
			calls: []call{{web, 0}, {web, time.Minute}, {web, time.Minute + time.Second}},
			want:  []bool{true, true, false},
		},
		"another rule on the same object goes through": {
			calls: []call{{web, 0}, {events.Key{UID: "uid-web", Rule: "orphaned-field"}, time.Second}},
			want:  []bool{true, true},
		},
		"the same rule on another object goes through": {
			calls: []call{{web, 0}, {events.Key{UID: "uid-api", Rule: "imperative-edit"}, time.Second}},
			want:  []bool{true, true},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			l := events.NewLimiter(time.Minute)
			var got []bool
			for _, c := range tc.calls {
				got = append(got, l.Allow(c.key, start.Add(c.after)))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Allow (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLimiterForgetsKeysWhoseGapHasPassed(t *testing.T) {
	start := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	l := events.NewLimiter(time.Minute)
	for i := range 100 {
		l.Allow(events.Key{UID: "deleted", Rule: fmt.Sprint(i)}, start)
	}
	l.Allow(events.Key{UID: "live", Rule: "imperative-edit"}, start.Add(2*time.Minute))
	if got := l.Len(); got != 1 {
		t.Errorf("the Limiter holds %d keys two gaps later, want 1 (the new one)", got)
	}
}

func TestLimiterLetsOneOfConcurrentCallsThrough(t *testing.T) {
	now := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	l := events.NewLimiter(time.Minute)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		allowed int
	)
	for range 50 {
		wg.Go(func() {
			if l.Allow(events.Key{UID: "uid-web", Rule: "imperative-edit"}, now) {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if allowed != 1 {
		t.Errorf("%d of 50 concurrent calls were allowed, want 1", allowed)
	}
}

func TestTruncate(t *testing.T) {
	tests := map[string]struct {
		in   string
		n    int
		want string
	}{
		"a short note is kept":                     {in: "abc", n: 5, want: "abc"},
		"a long note ends with an ellipsis":        {in: "abcdefgh", n: 6, want: "abc…"},
		"a multi-byte rune is never cut in halves": {in: "ééééé", n: 6, want: "é…"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := events.Truncate(tc.in, tc.n); got != tc.want {
				t.Errorf("Truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
		})
	}
}

func ExampleLimiter() {
	l := events.NewLimiter(time.Minute)
	now := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	key := events.Key{UID: "uid-web", Rule: "imperative-edit"}
	fmt.Println(events.Reason(key.Rule), l.Allow(key, now), l.Allow(key, now.Add(time.Second)), l.Allow(key, now.Add(time.Minute)))
	// Output: ImperativeEdit true false true
}
