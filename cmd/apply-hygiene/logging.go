package main

import (
	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// newLogger is the server's logger at --log-level, without
// controller-runtime's aggregated healthz line (withoutHealthzSummary).
func newLogger(level string) logr.Logger {
	return withoutHealthzSummary(zap.New(zap.Level(logLevel(level))))
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

// withoutHealthzSummary returns logger without the line healthzSummary
// names.
func withoutHealthzSummary(logger logr.Logger) logr.Logger {
	sink := logger.GetSink()
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		// The filter's Info is one more frame between the caller and the sink.
		sink = cd.WithCallDepth(1)
	}
	return logr.New(&healthzFilter{LogSink: sink})
}

// healthzFilter drops the healthzSummary line of the healthzLogger and
// passes everything else to LogSink.
type healthzFilter struct {
	logr.LogSink
	name string
}

var (
	_ logr.LogSink          = (*healthzFilter)(nil)
	_ logr.CallDepthLogSink = (*healthzFilter)(nil)
)

// Info logs unless it is the healthz summary.
func (f *healthzFilter) Info(level int, msg string, keysAndValues ...any) {
	if f.name == healthzLogger && msg == healthzSummary && !hasKey(keysAndValues, "checker") {
		return
	}
	f.LogSink.Info(level, msg, keysAndValues...)
}

// WithValues keeps the filter around the sink with the values.
func (f *healthzFilter) WithValues(keysAndValues ...any) logr.LogSink {
	return &healthzFilter{LogSink: f.LogSink.WithValues(keysAndValues...), name: f.name}
}

// WithName keeps the filter around the named sink, and remembers the name.
func (f *healthzFilter) WithName(name string) logr.LogSink {
	full := name
	if f.name != "" {
		full = f.name + "/" + name
	}
	return &healthzFilter{LogSink: f.LogSink.WithName(name), name: full}
}

// WithCallDepth passes the depth to the sink when it takes one.
func (f *healthzFilter) WithCallDepth(depth int) logr.LogSink {
	if cd, ok := f.LogSink.(logr.CallDepthLogSink); ok {
		return &healthzFilter{LogSink: cd.WithCallDepth(depth), name: f.name}
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
