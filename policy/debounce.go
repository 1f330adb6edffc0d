package policy

import (
	"context"
	"time"
)

// changeSignal carries notices that a policy source changed. It holds one
// pending notice at the most: notices that come while one waits merge
// into it.
type changeSignal chan struct{}

func newChangeSignal() changeSignal { return make(changeSignal, 1) }

// notify records a change without blocking.
func (c changeSignal) notify() {
	select {
	case c <- struct{}{}:
	default:
	}
}

// debounce calls reload once no change came on changed for d after one
// or more did, and again after each later burst. It returns when ctx is
// done or changed is closed.
func debounce(ctx context.Context, d time.Duration, changed <-chan struct{}, reload func()) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-changed:
			if !ok {
				return
			}
			timer.Reset(d)
		case <-timer.C:
			reload()
		}
	}
}
