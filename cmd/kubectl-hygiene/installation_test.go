package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExplainUsesTheInstalledChart: connected, explain decides with the
// configuration and user policies of the chart's ConfigMaps, says so on
// stderr, and falls back to the defaults where there is no installation;
// --policy-config replaces the chart's configuration.
func TestExplainUsesTheInstalledChart(t *testing.T) {
	connect := fakeCluster(t, "testdata/seed004/live.yaml", "testdata/chart/configmaps.yaml")
	explain := []string{"explain", "statefulset/my-wonderhoy-app", "-n", "default", "-o", "json"}
	tests := map[string]struct {
		flags  []string
		stderr string
		want   []string
	}{
		"the chart's configuration and its two user policies": {
			stderr: "using policy configuration from configmap apply-hygiene/apply-hygiene-config and 2 user policies\n",
			want:   []string{"from-a-configmap warn", "from-the-chart warn", "imperative-edit deny", "orphaned-field deny"},
		},
		"no installation in --hygiene-namespace: the defaults": {
			flags:  []string{"--hygiene-namespace", "elsewhere"},
			stderr: "using the default policy configuration and no user policies\nnote: no apply-hygiene ConfigMaps in namespace elsewhere",
			want:   []string{"imperative-edit deny", "orphaned-field warn"},
		},
		"--policy-config replaces the chart's configuration, not its policies": {
			flags:  []string{"--policy-config", "testdata/chart/config.yaml"},
			stderr: "using file testdata/chart/config.yaml and 2 user policies\n",
			want:   []string{"from-a-configmap warn", "from-the-chart warn", "imperative-edit warn", "orphaned-field warn"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runCluster(t, connect, append(explain, tc.flags...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.HasPrefix(stderr, tc.stderr) {
				t.Errorf("stderr = %q, want it to start with %q", stderr, tc.stderr)
			}
			if diff := cmp.Diff(tc.want, ruleActions(t, stdout)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}
