package audit

import (
	"testing"
	"time"
)

func TestNextStart(t *testing.T) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		recorded, own time.Time
		want          time.Time
	}{
		"no scan ever ran: at once": {
			want: now,
		},
		"the last recorded scan is an interval old: at once": {
			recorded: now.Add(-time.Hour),
			want:     now,
		},
		"the last recorded scan is older than an interval: at once": {
			recorded: now.Add(-3 * time.Hour),
			want:     now,
		},
		"another replica scanned 10 minutes ago: the rest of the interval": {
			recorded: now.Add(-10 * time.Minute),
			want:     now.Add(50 * time.Minute),
		},
		"this replica's own scan is later than the record (recording failed)": {
			recorded: now.Add(-2 * time.Hour),
			own:      now.Add(-5 * time.Minute),
			want:     now.Add(55 * time.Minute),
		},
		"the record is later than this replica's own scan": {
			recorded: now.Add(-5 * time.Minute),
			own:      now.Add(-70 * time.Minute),
			want:     now.Add(55 * time.Minute),
		},
		"a record from a clock ahead of this one waits one interval at most": {
			recorded: now.Add(3 * time.Hour),
			want:     now.Add(time.Hour),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := nextStart(now, tc.recorded, tc.own, time.Hour); !got.Equal(tc.want) {
				t.Errorf("nextStart = %v, want %v", got, tc.want)
			}
		})
	}
}
