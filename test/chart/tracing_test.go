package chart_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
)

// The tracing values become the server's tracing flags: none while
// tracing is off; tracing.followParent=false adds
// --tracing-follow-parent=false, and a release's values without the key
// (helm upgrade --reuse-values of a release older than it) keep the
// server's default, true, rather than turning it off.
func TestTracingValues(t *testing.T) {
	on := []string{"--set", "tracing.enabled=true,tracing.endpoint=otel-collector.monitoring:4317"}
	tests := map[string]struct {
		extra []string
		want  []string
	}{
		"off by default": {},
		"on: the parent's decision is followed": {
			extra: on,
			want:  []string{"--tracing-endpoint=otel-collector.monitoring:4317", "--tracing-sampling-ratio=1"},
		},
		"on, not following the parent": {
			extra: append(on, "--set", "tracing.followParent=false", "--set-json", "tracing.samplingRatio=0.01"),
			want:  []string{"--tracing-endpoint=otel-collector.monitoring:4317", "--tracing-sampling-ratio=0.01", "--tracing-follow-parent=false"},
		},
		"on, with values that lack followParent": {
			extra: append(on, "--set", "tracing.followParent=null"),
			want:  []string{"--tracing-endpoint=otel-collector.monitoring:4317", "--tracing-sampling-ratio=1"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := decode(t, render(t, "default", tc.extra...))
			var got []string
			for _, a := range only[appsv1.Deployment](t, objs, "Deployment").Spec.Template.Spec.Containers[0].Args {
				if strings.HasPrefix(a, "--tracing-") {
					got = append(got, a)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("tracing flags (-want +got):\n%s", diff)
			}
		})
	}
}
