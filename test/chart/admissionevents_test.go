package chart_test

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// admissionEvents=false turns the server's admission events off, and the
// ClusterRole then grants events only when the periodic audit records
// them: a permission nothing uses is not granted.
func TestAdmissionEventsValue(t *testing.T) {
	tests := map[string]struct {
		scenario       string
		extra          []string
		wantFlag       bool
		wantEventsRule bool
	}{
		"on by default": {scenario: "default", wantFlag: false, wantEventsRule: true},
		"off, without the audit": {
			scenario: "default", extra: []string{"--set", "admissionEvents=false"},
			wantFlag: true, wantEventsRule: false,
		},
		"off, with the audit, which records events too": {
			scenario: "common", extra: []string{"--set", "admissionEvents=false"},
			wantFlag: true, wantEventsRule: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := decode(t, render(t, tc.scenario, tc.extra...))
			args := only[appsv1.Deployment](t, objs, "Deployment").Spec.Template.Spec.Containers[0].Args
			var got []string
			for _, a := range args {
				if strings.HasPrefix(a, "--admission-events") {
					got = append(got, a)
				}
			}
			var want []string
			if tc.wantFlag {
				want = []string{"--admission-events=false"}
			}
			if !slices.Equal(got, want) {
				t.Errorf("admission-events flags = %q, want %q", got, want)
			}
			cr := only[rbacv1.ClusterRole](t, objs, "ClusterRole")
			if has := slices.ContainsFunc(cr.Rules, func(r rbacv1.PolicyRule) bool {
				return slices.Contains(r.APIGroups, "events.k8s.io")
			}); has != tc.wantEventsRule {
				t.Errorf("the ClusterRole grants events.k8s.io events: %v, want %v", has, tc.wantEventsRule)
			}
		})
	}
}
