package merge

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A count that kubectl scale --replicas=0 left has no owner in
// managedFields (the Scale's replicas is omitempty), as KEDA's scale to
// zero leaves it: an apply whose manifest adds replicas over it reverts
// nothing that a person is proven to have set, unless last-applied has the
// count (then any change is drift). Soak seed 271126, sequence 226.
func TestAnalyzeClientSideApplyOverAnUnownedZero(t *testing.T) {
	const dir = "scaled-to-zero-then-apply"
	tests := map[string]struct {
		// lastAppliedReplicas, when set, is live's last-applied count.
		lastAppliedReplicas int64
		want                []string
	}{
		"last-applied lacks the count: nothing tells a person's scale from KEDA's": {},
		"last-applied has the count: the 0 drifted from it": {
			lastAppliedReplicas: 1,
			want:                []string{"spec.replicas"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			live := readObject(t, dir, "live.yaml")
			if tc.lastAppliedReplicas != 0 {
				var manifest map[string]any
				if err := json.Unmarshal([]byte(live.GetAnnotations()[LastAppliedAnnotation]), &manifest); err != nil {
					t.Fatal(err)
				}
				la := &unstructured.Unstructured{Object: manifest}
				mustSet(t, la, tc.lastAppliedReplicas, "spec", "replicas")
				setLastApplied(t, live, la)
			}
			an, err := NewAnalyzer().AnalyzeClientSideApply(live, readObject(t, dir, "result.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, paths(an.Reverts)); diff != "" {
				t.Errorf("reverts (-want +got):\n%s", diff)
			}
		})
	}
}
