package chart_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
)

// The pod's grace period outlasts the server's shutdown (delay, drain and
// 10 s for the lease's release and the exit), and the leader-election
// flags are passed only to a server that runs the audit.
func TestShutdownAndLeaderElectionFlags(t *testing.T) {
	tests := map[string]struct {
		scenario  string
		extra     []string
		wantGrace int64
		wantFlags []string
	}{
		"the defaults, without the audit": {
			scenario: "default", wantGrace: 45,
			wantFlags: []string{"--shutdown-delay=5s", "--shutdown-timeout=30s"},
		},
		"the audit with the default election": {
			scenario: "common", wantGrace: 45,
			wantFlags: []string{"--shutdown-delay=5s", "--shutdown-timeout=30s", "--leader-election-lease-duration=15s",
				"--leader-election-renew-deadline=10s", "--leader-election-retry-period=2s"},
		},
		// helm upgrade --reuse-values from a chart without these values
		// keeps the old release's values, without the new defaults: the
		// server's own defaults apply, and the grace period counts them.
		"the values missing, as after an upgrade with --reuse-values": {
			scenario: "common", extra: []string{"--set", "shutdownDelay=null,shutdownTimeout=null,audit.leaderElection=null"},
			wantGrace: 45, wantFlags: nil,
		},
		"everything set": {
			scenario: "full", wantGrace: 40,
			wantFlags: []string{"--shutdown-delay=10s", "--shutdown-timeout=20s", "--leader-election-lease-duration=30s",
				"--leader-election-renew-deadline=20s", "--leader-election-retry-period=4s"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			deploy := only[appsv1.Deployment](t, decode(t, render(t, tc.scenario, tc.extra...)), "Deployment")
			pod := deploy.Spec.Template.Spec
			if pod.TerminationGracePeriodSeconds == nil || *pod.TerminationGracePeriodSeconds != tc.wantGrace {
				t.Errorf("terminationGracePeriodSeconds = %v, want %d", pod.TerminationGracePeriodSeconds, tc.wantGrace)
			}
			var got []string
			for _, arg := range pod.Containers[0].Args {
				if strings.HasPrefix(arg, "--shutdown-") || strings.HasPrefix(arg, "--leader-election-") {
					got = append(got, arg)
				}
			}
			if diff := cmp.Diff(tc.wantFlags, got); diff != "" {
				t.Errorf("shutdown and leader-election flags (-want +got):\n%s", diff)
			}
		})
	}
}
