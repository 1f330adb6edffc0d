package main

import (
	"context"
	"errors"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
)

// The shutdown sequence, on the first SIGTERM or SIGINT:
//
//  1. /readyz fails at once (the readiness check "shutdown"), so a load
//     balancer probing it, or the kubelet's readiness probe, stops sending
//     new connections; in a cluster the EndpointSlice controller already
//     marks a terminating pod's endpoint not ready.
//  2. The server keeps serving for --shutdown-delay: the time for the
//     EndpointSlice change to reach kube-proxy and the API server (or for
//     a load balancer to probe /readyz again). New connections made in
//     that time are still answered.
//  3. The manager's context ends. controller-runtime v0.25.2
//     (pkg/manager/internal.go, engageStopProcedure) then stops its
//     runnable groups one after the other, all within
//     --shutdown-timeout (GracefulShutdownTimeout): the other runnables
//     (policy sources, certificate manager), the leader-election ones
//     (the audit), the caches, then the webhook server, and the HTTP
//     servers (metrics, the health probes) last. So /readyz keeps
//     answering 503 through the delay and the drain. The webhook server
//     (pkg/webhook/server.go, DefaultServer.Start) calls
//     http.Server.Shutdown when its context ends: it closes the listener,
//     sends every HTTP/2 connection a GOAWAY (net/http's bundled HTTP/2
//     server registers that as its OnShutdown hook), so the API server
//     opens its next connection elsewhere, and waits for the requests in
//     flight. Its context is also the base of every request's context,
//     which is why keepThroughShutdown detaches the reviews from it.
//     net/http (go1.26 h2_bundle.go) sends the GOAWAY only to the HTTP/2
//     connections that exist when Shutdown starts: one whose TLS
//     handshake was still going on gets none and is served until its
//     client closes it or --shutdown-timeout ends, which the delay makes
//     unlikely (no new connections arrive by then).
//  4. The process exits 0 once the manager has stopped, or 1 when the
//     drain outlasted --shutdown-timeout.
//
// A second signal exits at once with code 1.

// errShuttingDown is the readiness check's answer once shutdown began.
var errShuttingDown = errors.New("shutting down")

// readinessGate is the readiness check "shutdown": it passes until
// Close and fails from then on.
type readinessGate struct {
	closed atomic.Bool
}

// Close makes the check fail from now on.
func (g *readinessGate) Close() { g.closed.Store(true) }

// Check is a healthz.Checker.
func (g *readinessGate) Check(*http.Request) error {
	if g.closed.Load() {
		return errShuttingDown
	}
	return nil
}

// shutdownOnSignal returns a context that ends delay after the first value
// on signals (or when parent ends). At the first signal it calls notReady
// at once; at a second one it calls exit(1). The logger is parent's.
func shutdownOnSignal(parent context.Context, signals <-chan os.Signal, delay time.Duration, notReady func(), exit func(code int)) context.Context {
	ctx, cancel := context.WithCancel(parent)
	log := logr.FromContextOrDiscard(parent)
	go func() {
		defer cancel()
		var sig os.Signal
		select {
		case sig = <-signals:
		case <-ctx.Done():
			return
		}
		notReady()
		log.Info("shutting down: not ready, serving on for the shutdown delay", "signal", sig.String(), "shutdownDelay", delay.String())
		go func() {
			select {
			case sig := <-signals:
				log.Info("second signal: exiting at once", "signal", sig.String())
				exit(1)
			case <-parent.Done():
			}
		}()
		timer := time.NewTimer(delay)
		defer timer.Stop()
		select {
		case <-timer.C:
			log.Info("shutdown delay over: draining the reviews in flight")
		case <-parent.Done():
		}
	}()
	return ctx
}

// keepThroughShutdown serves next with a request context that the
// webhook server's shutdown does not end. controller-runtime's webhook
// server uses its own context as the base of every request's context and
// cancels it to shut down, so without this every review in flight would
// see its context canceled at the start of the drain and be answered as
// --failure-policy says (a rejected write with Fail) instead of being
// finished. A request still ends when its client goes away before
// shutdown began (stopping open), and always at the API server's deadline
// (the webhook endpoints set it from the request's timeout).
func keepThroughShutdown(stopping <-chan struct{}, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
		defer cancel()
		stop := context.AfterFunc(r.Context(), func() {
			select {
			case <-stopping:
				// The server is draining: finish the review.
			default:
				cancel()
			}
		})
		defer stop()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// closeConnectionsOnceShuttingDown answers every request with
// "Connection: close" once shutdown began (gate closed). net/http then
// closes an HTTP/1.1 connection right after the answer, and its HTTP/2
// server reads the header as a request to send that connection a GOAWAY.
// So during --shutdown-delay the API server's connections leave this
// replica one by one, each after a complete answer, rather than all at
// once when the drain closes the idle ones: a keep-alive connection closed
// while idle can cross a request the API server is just writing on it, and
// the API server does not retry a webhook call (a POST).
func closeConnectionsOnceShuttingDown(gate *readinessGate, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gate.closed.Load() {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}
