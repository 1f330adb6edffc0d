package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A field that kubectl hygiene handover handed over is its new writer's:
// the record (HandedOverAnnotation) keeps the orphan facts of an apply
// and of the stored object (the audit) off it, off a struct that holds it
// and off a field inside it; another field stays an orphan, and so does
// every field when the record does not parse. The fixture is the object
// as the API server stores it after kubectl set resources on an applied
// Deployment (TestFieldSetInsideAnEmptyStructAnApplierOwnsIsAnOrphan).
func TestHandedOverFieldsAreNoOrphans(t *testing.T) {
	const cpu = "spec.template.spec.containers[name=minio].resources.requests.cpu"
	tests := map[string]struct {
		record string
		want   []string
	}{
		"no record":                       {want: []string{cpu}},
		"the field handed over":           {record: `["` + cpu + `"]`},
		"the struct that holds it":        {record: `["spec.template.spec.containers[name=minio].resources"]`},
		"a field inside it, by hand":      {record: `["spec.template.spec.containers[name=minio].resources.requests.cpu.x"]`},
		"another field":                   {record: `["spec.template.spec.containers[name=minio].image"]`, want: []string{cpu}},
		"a record that is no list":        {record: cpu, want: []string{cpu}},
		"a path of the record that fails": {record: `["spec[", "metadata.labels.team"]`, want: []string{cpu}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			live := readObject(t, "recreated-then-set-resources", "live.yaml")
			manifest := readObject(t, "recreated-then-set-resources", "modified.yaml")
			if tc.record != "" {
				annotations := live.GetAnnotations()
				annotations[HandedOverAnnotation] = tc.record
				live.SetAnnotations(annotations)
			}
			_, an, err := NewAnalyzer().predictApply(live, manifest)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, paths(an.Orphans)); diff != "" {
				t.Errorf("orphans of the apply (-want +got):\n%s", diff)
			}
			stored, err := NewAnalyzer().AnalyzeLive(live)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, paths(stored.Orphans)); diff != "" {
				t.Errorf("orphans of the stored object (-want +got):\n%s", diff)
			}
		})
	}
}

// The record's value: the paths of earlier hand-overs and the new ones,
// as Path.String spells them, sorted, each once.
func TestRecordHandedOver(t *testing.T) {
	obj := map[string]any{"metadata": map[string]any{"annotations": map[string]any{HandedOverAnnotation: `["spec.replicas","metadata.labels[team]"]`}}}
	got, err := RecordHandedOver(obj, []string{"spec.replicas", "data.a"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `["data.a","metadata.labels.team","spec.replicas"]`; got != want {
		t.Fatalf("RecordHandedOver = %s, want %s", got, want)
	}
}
