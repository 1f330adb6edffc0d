package merge

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestQuantitiesAreNoDrift(t *testing.T) {
	obj := func(cpu, memory any) map[string]any {
		return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
				"name": "web", "resources": map[string]any{"requests": map[string]any{"cpu": cpu, "memory": memory}}}}}}}}
	}
	tests := map[string]struct {
		lastApplied, live map[string]any
		drift             int
	}{
		"0.5 cpu is stored as 500m":     {lastApplied: obj(0.5, "1Gi"), live: obj("500m", "1Gi")},
		"an integer is stored as text":  {lastApplied: obj(int64(1), int64(1024)), live: obj("1", "1Ki")},
		"another amount is still drift": {lastApplied: obj(int64(1), "1Gi"), live: obj("2", "1Gi"), drift: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			live := &unstructured.Unstructured{Object: tc.live}
			setLastApplied(t, live, &unstructured.Unstructured{Object: tc.lastApplied})
			an, err := NewAnalyzer().AnalyzeLive(live)
			if err != nil {
				t.Fatal(err)
			}
			if len(an.Drift) != tc.drift {
				t.Errorf("drift = %v, want %d fields", paths(an.Drift), tc.drift)
			}
		})
	}
}
