package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// shutdownProcess is what shutdownOnSignal did by a point in (fake) time.
type shutdownProcess struct {
	NotReady, Canceled bool
	ExitCodes          []int
}

func TestShutdownOnSignal(t *testing.T) {
	tests := map[string]struct {
		delay   time.Duration
		signals int
		// at is how long after the first signal the process is looked at.
		at   time.Duration
		want shutdownProcess
	}{
		"no signal: serving and ready": {
			delay: 5 * time.Second, at: time.Minute, want: shutdownProcess{},
		},
		"a signal: not ready at once, still serving": {
			delay: 5 * time.Second, signals: 1, at: 0, want: shutdownProcess{NotReady: true},
		},
		"a signal: still serving just before the delay is over": {
			delay: 5 * time.Second, signals: 1, at: 5*time.Second - time.Nanosecond, want: shutdownProcess{NotReady: true},
		},
		"a signal: the manager stops when the delay is over": {
			delay: 5 * time.Second, signals: 1, at: 5 * time.Second, want: shutdownProcess{NotReady: true, Canceled: true},
		},
		"a signal and no delay: the manager stops at once": {
			delay: 0, signals: 1, at: 0, want: shutdownProcess{NotReady: true, Canceled: true},
		},
		"a second signal: exit 1 at once, during the delay": {
			delay: 5 * time.Second, signals: 2, at: 0, want: shutdownProcess{NotReady: true, ExitCodes: []int{1}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				signals := make(chan os.Signal, 2)
				var got shutdownProcess
				ctx := shutdownOnSignal(t.Context(), signals, tc.delay,
					func() { got.NotReady = true }, func(code int) { got.ExitCodes = append(got.ExitCodes, code) })
				for range tc.signals {
					signals <- syscall.SIGTERM
					synctest.Wait()
				}
				time.Sleep(tc.at)
				synctest.Wait()
				got.Canceled = ctx.Err() != nil
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("after %d signal(s) and %s (-want +got):\n%s", tc.signals, tc.at, diff)
				}
			})
		})
	}
}

func TestReadinessGate(t *testing.T) {
	var g readinessGate
	if err := g.Check(nil); err != nil {
		t.Fatalf("before Close: Check() = %v, want nil", err)
	}
	g.Close()
	if err := g.Check(nil); !errors.Is(err, errShuttingDown) || err.Error() != "shutting down" {
		t.Errorf("after Close: Check() = %v, want %q", err, "shutting down")
	}
}

func TestKeepThroughShutdown(t *testing.T) {
	tests := map[string]struct {
		stopping bool
		want     error
	}{
		"the client goes away while serving: the review ends":   {stopping: false, want: context.Canceled},
		"the server cancels while draining: the review goes on": {stopping: true, want: nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stopping := make(chan struct{})
			if tc.stopping {
				close(stopping)
			}
			reqCtx, cancel := context.WithCancel(t.Context())
			var got error
			h := keepThroughShutdown(stopping, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				cancel()
				select {
				case <-r.Context().Done():
				case <-time.After(100 * time.Millisecond):
				}
				got = r.Context().Err()
			}))
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequestWithContext(reqCtx, http.MethodPost, "/validate", nil))
			if !errors.Is(got, tc.want) {
				t.Errorf("the review's context ended with %v, want %v", got, tc.want)
			}
		})
	}
}
