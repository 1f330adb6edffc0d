package main

import (
	"slices"
	"sync/atomic"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// newLogger is the server's logger at --log-level, without
// controller-runtime's aggregated healthz line and with one line for the
// leases it may no longer touch (filtered).
func newLogger(level string) logr.Logger {
	return filtered(zap.New(zap.Level(logLevel(level))))
}

// healthzLogger and healthzSummary name the line that controller-runtime's
// /healthz and /readyz handler logs at info each time a check fails:
// "healthz check failed" with "statuses" whose fields it does not export,
// so it reads `"statuses":[{},{}]` and names no check. A probe that fails
// while the server starts or drains (on purpose: see shutdown.go) would put
// it in the log every few seconds. The handler's own line per failed check
// ("healthz check failed" with "checker" and "error", at debug) stays.
const (
	healthzLogger  = "controller-runtime/healthz"
	healthzSummary = "healthz check failed"
)

// leaderElectionLogger is client-go's leader election, which logs every
// failed attempt on the audit's Lease as an error, with a stack trace.
// When helm uninstall deletes the Role while the pods are in their
// shutdown delay, each attempt is forbidden: the filter logs the first one
// as leaseForbidden, one line without a stack trace, and the others at
// debug.
const (
	leaderElectionLogger = "leaderelection"
	leaseForbidden       = "no access to the audit's leader-election Lease (its Role is gone, as during helm uninstall, or lacks leases): " +
		"not renewing or releasing it; another replica takes it over when it expires"
)

// filtered returns logger with the filter's changes (filter).
func filtered(logger logr.Logger) logr.Logger {
	sink := logger.GetSink()
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		// The filter's methods are one more frame between the caller and
		// the sink.
		sink = cd.WithCallDepth(1)
	}
	return logr.New(&filter{LogSink: sink, forbidden: new(atomic.Bool)})
}

// filter drops the healthzSummary line of the healthzLogger, turns the
// forbidden errors of the leaderElectionLogger into one leaseForbidden
// line, and passes everything else to LogSink.
type filter struct {
	logr.LogSink
	name string
	// forbidden is set once leaseForbidden was logged; shared by every
	// logger derived from the root.
	forbidden *atomic.Bool
}

var (
	_ logr.LogSink          = (*filter)(nil)
	_ logr.CallDepthLogSink = (*filter)(nil)
)

// Info logs unless it is the healthz summary.
func (f *filter) Info(level int, msg string, keysAndValues ...any) {
	if f.name == healthzLogger && msg == healthzSummary && !hasKey(keysAndValues, "checker") {
		return
	}
	f.LogSink.Info(level, msg, keysAndValues...)
}

// Error logs the error, the leader election's forbidden ones as
// leaseForbidden once, then at debug.
func (f *filter) Error(err error, msg string, keysAndValues ...any) {
	if f.name != leaderElectionLogger || !apierrors.IsForbidden(err) {
		f.LogSink.Error(err, msg, keysAndValues...)
		return
	}
	kv := slices.Concat(keysAndValues, []any{"error", err.Error()})
	if f.forbidden.CompareAndSwap(false, true) {
		f.LogSink.Info(0, leaseForbidden, kv...)
		return
	}
	if f.Enabled(1) {
		f.LogSink.Info(1, msg, kv...)
	}
}

// WithValues keeps the filter around the sink with the values.
func (f *filter) WithValues(keysAndValues ...any) logr.LogSink {
	return &filter{LogSink: f.LogSink.WithValues(keysAndValues...), name: f.name, forbidden: f.forbidden}
}

// WithName keeps the filter around the named sink, and remembers the name.
func (f *filter) WithName(name string) logr.LogSink {
	full := name
	if f.name != "" {
		full = f.name + "/" + name
	}
	return &filter{LogSink: f.LogSink.WithName(name), name: full, forbidden: f.forbidden}
}

// WithCallDepth passes the depth to the sink when it takes one.
func (f *filter) WithCallDepth(depth int) logr.LogSink {
	if cd, ok := f.LogSink.(logr.CallDepthLogSink); ok {
		return &filter{LogSink: cd.WithCallDepth(depth), name: f.name, forbidden: f.forbidden}
	}
	return f
}

func hasKey(keysAndValues []any, key string) bool {
	for i := 0; i < len(keysAndValues); i += 2 {
		if keysAndValues[i] == key {
			return true
		}
	}
	return false
}
