package main

import (
	"path/filepath"
	"strings"
	"testing"
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
