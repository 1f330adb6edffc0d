package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is off without an endpoint; with one the server has a provider,
// and a CA file it cannot read is an error naming the flag.
func TestTracerProvider(t *testing.T) {
	tests := map[string]struct {
		opts         TracingOptions
		wantProvider bool
		wantErr      string
	}{
		"off by default":                {opts: TracingOptions{SamplingRatio: 1}},
		"on with a plaintext endpoint":  {opts: TracingOptions{Endpoint: "127.0.0.1:4317", Insecure: true, SamplingRatio: 1}, wantProvider: true},
		"on with the system's roots":    {opts: TracingOptions{Endpoint: "collector.example:4317", SamplingRatio: 0.5}, wantProvider: true},
		"a CA file that cannot be read": {opts: TracingOptions{Endpoint: "collector.example:4317", CAFile: filepath.Join(t.TempDir(), "missing.crt")}, wantErr: "reading --tracing-ca-file: "},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tp, err := tc.opts.tracerProvider(t.Context())
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("tracerProvider() error = %v, want one starting with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("tracerProvider() error = %v", err)
			}
			if got := tp != nil; got != tc.wantProvider {
				t.Fatalf("tracerProvider() gave a provider: %v, want %v", got, tc.wantProvider)
			}
			if tp != nil {
				flushTraces(t.Context(), tp)
			}
		})
	}
}

// Which reviews are traced: by default a review follows the sampled flag
// of its call's traceparent (any caller's, when kube-apiserver passes it
// on); with --tracing-follow-parent=false the ratio decides on the trace
// ID alone, and the span still continues the caller's trace. A review's
// steps follow its root span either way.
func TestTracingSampler(t *testing.T) {
	// The ratio samples a trace ID by its last 8 bytes: inside 0.5 when
	// they are small, outside when they are large.
	inside := trace.TraceID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 1}
	outside := trace.TraceID{0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	type parent int
	const (
		none parent = iota
		remoteSampled
		remoteNotSampled
		localSampled
	)
	tests := map[string]struct {
		flags   []string
		parent  parent
		traceID trace.TraceID
		want    sdktrace.SamplingDecision
	}{
		"no traceparent, inside the ratio":                            {parent: none, traceID: inside, want: sdktrace.RecordAndSample},
		"no traceparent, outside the ratio":                           {parent: none, traceID: outside, want: sdktrace.Drop},
		"a sampled traceparent outside the ratio is followed":         {parent: remoteSampled, traceID: outside, want: sdktrace.RecordAndSample},
		"a traceparent not sampled inside the ratio is followed":      {parent: remoteNotSampled, traceID: inside, want: sdktrace.Drop},
		"not following: no traceparent, outside the ratio":            {flags: []string{"--tracing-follow-parent=false"}, parent: none, traceID: outside, want: sdktrace.Drop},
		"not following: a sampled traceparent outside the ratio":      {flags: []string{"--tracing-follow-parent=false"}, parent: remoteSampled, traceID: outside, want: sdktrace.Drop},
		"not following: a sampled traceparent inside the ratio":       {flags: []string{"--tracing-follow-parent=false"}, parent: remoteSampled, traceID: inside, want: sdktrace.RecordAndSample},
		"not following: a traceparent not sampled inside the ratio":   {flags: []string{"--tracing-follow-parent=false"}, parent: remoteNotSampled, traceID: inside, want: sdktrace.RecordAndSample},
		"not following: a step follows its review, outside the ratio": {flags: []string{"--tracing-follow-parent=false"}, parent: localSampled, traceID: outside, want: sdktrace.RecordAndSample},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var o TracingOptions
			fs := pflag.NewFlagSet("apply-hygiene", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(append([]string{"--tracing-sampling-ratio=0.5"}, tc.flags...)); err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			sc := trace.SpanContextConfig{TraceID: tc.traceID, SpanID: trace.SpanID{1}}
			switch tc.parent {
			case remoteSampled:
				sc.TraceFlags, sc.Remote = trace.FlagsSampled, true
			case remoteNotSampled:
				sc.Remote = true
			case localSampled:
				sc.TraceFlags = trace.FlagsSampled
			}
			if tc.parent != none {
				ctx = trace.ContextWithSpanContext(ctx, trace.NewSpanContext(sc))
			}
			got := o.sampler().ShouldSample(sdktrace.SamplingParameters{ParentContext: ctx, TraceID: tc.traceID, Name: "apply-hygiene /validate"})
			if got.Decision != tc.want {
				t.Errorf("decision %v, want %v", got.Decision, tc.want)
			}
		})
	}
}
