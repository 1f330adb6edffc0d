package merge

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestIsRecreation(t *testing.T) {
	created := time.Date(2026, 11, 26, 14, 43, 2, 0, time.UTC)
	tests := map[string]struct {
		owner Owner
		want  bool
	}{
		"kubectl replace --force: kubectl-replace's entry from the creation": {
			owner: Owner{Manager: "kubectl-replace", Operation: "Update", Time: created},
			want:  true,
		},
		"the entry a second after the creation (two readings of the clock)": {
			owner: Owner{Manager: "kubectl-replace", Operation: "Update", Time: created.Add(time.Second)},
			want:  true,
		},
		"a kubectl replace of the object later: a person's update": {
			owner: Owner{Manager: "kubectl-replace", Operation: "Update", Time: created.Add(time.Minute)},
		},
		"another manager at the creation time": {
			owner: Owner{Manager: "kubectl-patch", Operation: "Update", Time: created},
		},
		"kubectl-replace on a subresource": {
			owner: Owner{Manager: "kubectl-replace", Operation: "Update", Subresource: "status", Time: created},
		},
		"an entry without time": {
			owner: Owner{Manager: "kubectl-replace", Operation: "Update"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, isRecreation(tc.owner, created)); diff != "" {
				t.Errorf("isRecreation (-want +got):\n%s", diff)
			}
		})
	}
}
