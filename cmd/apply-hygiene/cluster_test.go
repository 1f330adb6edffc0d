package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
)

// The cluster of the reviews keeps what the review core reads besides
// the removal proofs with --removal-proofs=false: the autoscalers
// (replicas-autoscaled) and the scale paths of custom resources. A wrapper
// that hid them made replicas-autoscaled silent and left every /scale of
// a custom resource unreviewed (found by a generative replay with
// --removal-proofs=false: kubectl hygiene diff predicted
// [replicas-autoscaled], the apply printed none).
func TestReviewClusterReads(t *testing.T) {
	tests := map[string]struct {
		proofs bool
		want   []string
	}{
		"with removal proofs":    {proofs: true, want: []string{"autoscalers", "scale paths", "removal proofs"}},
		"without removal proofs": {proofs: false, want: []string{"autoscalers", "scale paths"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var c any = clusterOf(dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), Options{RemovalProofs: tc.proofs}, nil, func(string) {})
			var got []string
			if _, ok := c.(review.AutoscalerCluster); ok {
				got = append(got, "autoscalers")
			}
			if _, ok := c.(review.ScaleCluster); ok {
				got = append(got, "scale paths")
			}
			if _, ok := c.(review.RemovalProver); ok {
				got = append(got, "removal proofs")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("what the reviews read (-want +got):\n%s", diff)
			}
		})
	}
}
