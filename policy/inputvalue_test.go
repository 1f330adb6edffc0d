package policy

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// The input Evaluate builds must be the input Rego saw when Evaluate
// encoded Input to JSON and parsed it back.
func TestInputValueMatchesJSON(t *testing.T) {
	tests := map[string]*Input{
		"an input without analysis and with nil labels and groups": {Classification: Controller},
		"an input with every optional field set":                   everyField(t),
		"an input with autoscalers but no manifest replicas": {Classification: ClientSideApply,
			Autoscaling: &Autoscaling{Autoscalers: []Autoscaler{{Name: "web", MinReplicas: 1, MaxReplicas: 10}}}},
	}
	dirs, err := inputDirs()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		tests["the fixture "+d.Name()] = loadInput(t, d.Name())
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			raw, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ast.ValueFromReader(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			got, err := inputValue(in)
			if err != nil {
				t.Fatal(err)
			}
			if ast.Compare(want, got) != 0 {
				t.Errorf("input value mismatch (-want +got):\n%s", cmp.Diff(want.String(), got.String()))
			}
		})
	}
}

func everyField(t *testing.T) *Input {
	t.Helper()
	in := loadInput(t, "client-side-apply")
	p := func(s string) merge.Path {
		parsed, err := merge.ParsePath(s)
		if err != nil {
			t.Fatal(err)
		}
		return parsed
	}
	fact := merge.FieldFact{
		Path: p("spec.template.spec.containers[name=nginx].env[name=A]"),
		Live: map[string]any{"f": 0.5, "tiny": 1e-7, "huge": 1e21, "i": int64(3), "n": json.Number("1.50"), "null": nil,
			"list": []any{"a", true, nil, []any(nil), map[string]any(nil)}, "bad": "a\xffb", "\xfekey": "v"},
		Result:      int(7),
		LastApplied: []string{"typed", "value"},
		Manifest:    false,
		Owners: []merge.Owner{{Manager: "kubectl-edit", Operation: "Update", Subresource: "scale",
			Time: time.Date(2026, 11, 22, 2, 18, 46, 123456789, time.FixedZone("x", 3600)), APIVersion: "apps/v1"}, {Manager: "m"}},
		DependsOn: p("spec.updateStrategy.type"),
		Rejected:  true,
	}
	in.Request.User.Groups = nil
	in.Namespace.Labels = map[string]string{"env": "prod", "bad\xff": "v\xff"}
	in.Analysis.Strategy = merge.StrategicMergePatch
	in.Analysis.LastApplied.Error = "not JSON"
	in.Analysis.LastApplied.Fault = merge.FaultNotAnObject
	in.Analysis.LastApplied.Replaced = true
	in.Analysis.Drift = nil
	in.Analysis.Reverts = []merge.FieldFact{fact}
	orphan := fact
	orphan.RemovePatch = `[{"op":"remove","path":"/x"}]`
	orphan.Pointer = "/x"
	orphan.RemovedWith = []string{"/y", "/z~1\xff"}
	orphan.RestoredByUndo = true
	orphan.Frozen = true
	orphan.RevertRefused = true
	in.Analysis.Orphans = append(in.Analysis.Orphans, orphan, merge.FieldFact{Path: p("metadata.labels.x")})
	in.Analysis.ReplicasReset = &fact
	in.Analysis.Rollback = &merge.Rollback{RevisionKind: "ReplicaSet", RevisionName: "web-1", Revision: 3, Confirmed: true,
		StaleLastApplied: true, RepairSource: "rebuilt", RepairedLastApplied: "{}\n", Changes: []merge.FieldFact{fact},
		LastAppliedUpdaters: []string{"kubectl-client-side-apply", "kubectl\xff"},
		DroppedRecord:       &merge.HandoverRecord{Value: `["metadata.labels.team"]` + "\xff", Paths: []string{"metadata.labels.team"}, Fits: true}}
	in.Request.Object.Namespace = ""
	in.Request.Resource = &GroupResource{Group: "apps", Resource: "deployments\xff"}
	in.Autoscaling = &Autoscaling{ManifestReplicas: float64(3), Autoscalers: []Autoscaler{
		{Name: "web", MinReplicas: 2, MaxReplicas: 10, CurrentReplicas: 3, DesiredReplicas: 5}, {Name: "bad\xff"}}}
	return in
}

func TestInputValueFailsAsJSONDoes(t *testing.T) {
	in := loadInput(t, "client-side-apply")
	in.Analysis.Orphans = []merge.FieldFact{{Owners: []merge.Owner{{Manager: "m", Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}}}
	if _, err := json.Marshal(in); err == nil {
		t.Fatal("json.Marshal succeeded, want an error for year 10000")
	}
	if _, err := inputValue(in); err == nil {
		t.Error("inputValue succeeded, want an error for year 10000")
	}
}
