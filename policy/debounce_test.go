package policy

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDebounce(t *testing.T) {
	const d = 100 * time.Millisecond
	tests := map[string]struct {
		notices []time.Duration // when each notice comes, from the start
		want    int             // reloads
	}{
		"no notice reloads nothing":                   {want: 0},
		"a burst of notices reloads once":             {notices: []time.Duration{0, 10 * time.Millisecond, 90 * time.Millisecond, 150 * time.Millisecond}, want: 1},
		"two bursts apart reload once each":           {notices: []time.Duration{0, 10 * time.Millisecond, 500 * time.Millisecond}, want: 2},
		"notices at the same instant reload once":     {notices: []time.Duration{0, 0, 0}, want: 1},
		"a notice right after a reload reloads again": {notices: []time.Duration{0, d + time.Millisecond}, want: 2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				changed := newChangeSignal()
				reloads := 0
				done := make(chan struct{})
				go func() {
					debounce(ctx, d, changed, func() { reloads++ })
					close(done)
				}()
				start := time.Now()
				for _, at := range tc.notices {
					time.Sleep(at - time.Since(start))
					changed.notify()
				}
				time.Sleep(time.Second)
				synctest.Wait()
				close(changed) // ends the loop
				<-done
				if diff := cmp.Diff(tc.want, reloads); diff != "" {
					t.Errorf("reloads (-want +got):\n%s", diff)
				}
			})
		})
	}
}
