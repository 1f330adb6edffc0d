package generative_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The replicas kube-controller-manager's autoscaler may set without
// metrics: the bounds, with its downscale stabilization window and its
// scale-up limit.
func TestAutoscalerAllowed(t *testing.T) {
	now := time.Now()
	tests := map[string]struct {
		recommendations []recommendation
		replicas        int
		want            []int
	}{
		"above max goes to max": {
			recommendations: []recommendation{{5, now.Add(-time.Minute)}},
			replicas:        5, want: []int{3},
		},
		"below min goes to min": {
			recommendations: []recommendation{{2, now.Add(-time.Minute)}},
			replicas:        1, want: []int{2},
		},
		"below min after a clamp to max goes to max (stabilization)": {
			recommendations: []recommendation{{2, now.Add(-2 * time.Minute)}, {3, now.Add(-time.Minute)}},
			replicas:        1, want: []int{3},
		},
		"a recommendation at the window's edge may count or not": {
			recommendations: []recommendation{{3, now.Add(-5 * time.Minute)}},
			replicas:        1, want: []int{2, 3},
		},
		"a recommendation older than the window does not count": {
			recommendations: []recommendation{{3, now.Add(-6 * time.Minute)}},
			replicas:        1, want: []int{2},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := &autoscaler{min: 2, max: 3, recommendations: tc.recommendations}
			if diff := cmp.Diff(tc.want, a.allowed(tc.replicas, now)); diff != "" {
				t.Errorf("allowed (-want +got):\n%s", diff)
			}
		})
	}
}

// The autoscaler changes replicas only out of its bounds, and never 0.
func TestAutoscalerOutOfBounds(t *testing.T) {
	a := &autoscaler{min: 2, max: 3}
	got := map[int]bool{}
	for n := 0; n <= 5; n++ {
		got[n] = a.outOfBounds(n)
	}
	want := map[int]bool{0: false, 1: true, 2: false, 3: false, 4: true, 5: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outOfBounds (-want +got):\n%s", diff)
	}
}
