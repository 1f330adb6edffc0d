package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"

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

// An HPA's metric targets are quantities inside an atomic list: the
// manifest's averageValue: 30 and value: 0.5 are stored as "30" and
// "500m", and only another amount is a change of the list. Drift, an edit
// that puts last-applied's amount back and an apply that sets an edited
// amount back are judged by amount (fixture hpa-target-quantities).
func TestHPATargetQuantitiesCompareByAmount(t *testing.T) {
	withTarget := func(t *testing.T, obj *unstructured.Unstructured, v any, manager string) *unstructured.Unstructured {
		t.Helper()
		out := obj.DeepCopy()
		metrics, _, _ := unstructured.NestedSlice(out.Object, "spec", "metrics")
		target := metrics[0].(map[string]any)["pods"].(map[string]any)["target"].(map[string]any)
		target["averageValue"] = v
		if err := unstructured.SetNestedSlice(out.Object, metrics, "spec", "metrics"); err != nil {
			t.Fatal(err)
		}
		if manager != "" {
			withOwner(t, out, manager, `{"f:spec":{"f:metrics":{}}}`)
		}
		return out
	}
	tests := map[string]struct {
		// old is the stored amount before the write, new after it ("" for
		// AnalyzeLive of the stored object at old).
		old, new  string
		operation string
		want      []string
	}{
		"the stored object has the manifest's amounts":          {old: "30", operation: "live"},
		"an edit of another amount is drift":                    {old: "31", operation: "live", want: []string{"spec.metrics"}},
		"an edit back to last-applied's amount changes nothing": {old: "40", new: "30", operation: "update"},
		"an edit to another amount is an imperative change":     {old: "30", new: "31", operation: "update", want: []string{"spec.metrics"}},
		"an apply that sets an edited amount back reverts it":   {old: "40", new: "30", operation: "apply", want: []string{"spec.metrics"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, "hpa-target-quantities")
			old := withTarget(t, f.live, tc.old, "kubectl-edit")
			var (
				an  *Analysis
				err error
			)
			switch tc.operation {
			case "live":
				an, err = NewAnalyzer().AnalyzeLive(old)
			case "update":
				an, err = NewAnalyzer().AnalyzeUpdate(old, withTarget(t, old, tc.new, ""))
			case "apply":
				an, err = NewAnalyzer().AnalyzeClientSideApply(old, withTarget(t, old, tc.new, ""))
			}
			if err != nil {
				t.Fatal(err)
			}
			got := append(append(paths(an.Drift), paths(an.ImperativeChanges)...), paths(an.Reverts)...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("drift, imperative changes and reverts (-want +got):\n%s", diff)
			}
		})
	}
}
