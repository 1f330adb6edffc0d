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

// The record's value: the entries of earlier hand-overs as written (one
// that is no path or no string kept, or left out), the new paths (a
// Secret's stringData.K as data.K), sorted, each once; a record that is
// no JSON list is refused, not overwritten.
func TestRecordHandedOver(t *testing.T) {
	object := func(kind, record string) map[string]any {
		obj := map[string]any{"kind": kind, "metadata": map[string]any{}}
		if record != "" {
			obj["metadata"] = map[string]any{"annotations": map[string]any{HandedOverAnnotation: record}}
		}
		return obj
	}
	tests := map[string]struct {
		obj     map[string]any
		paths   []string
		want    string
		wantErr bool
	}{
		"the first":                 {obj: object("Deployment", ""), paths: []string{"spec.replicas"}, want: `["spec.replicas"]`},
		"after others, one again":   {obj: object("Deployment", `["spec.replicas","metadata.labels[team]"]`), paths: []string{"spec.replicas", "data.a"}, want: `["data.a","metadata.labels[team]","spec.replicas"]`},
		"an entry that is no path":  {obj: object("Deployment", `["bad[[",5]`), paths: []string{"spec.replicas"}, want: `["bad[[","spec.replicas"]`},
		"a Secret's stringData key": {obj: object("Secret", ""), paths: []string{"stringData.password", "stringData[\"a b\"]"}, want: `["data.password","data[a b]"]`},
		"another kind's stringData": {obj: object("Widget", ""), paths: []string{"stringData.password"}, want: `["stringData.password"]`},
		"a record that is no list":  {obj: object("Deployment", "spec.replicas"), paths: []string{"spec.replicas"}, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var paths []Path
			for _, s := range tc.paths {
				paths = append(paths, mustPath(t, s))
			}
			got, err := RecordHandedOver(tc.obj, paths)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("RecordHandedOver = %s, %v; want %s (an error: %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// The record as the orphan facts read it: each entry that is a path, as
// Path.String spells it; the others left out, not the whole record.
func TestHandedOver(t *testing.T) {
	obj := map[string]any{"metadata": map[string]any{"annotations": map[string]any{HandedOverAnnotation: `["metadata.labels[team]","bad[[",5,"spec.replicas"]`}}}
	if diff := cmp.Diff([]string{"metadata.labels.team", "spec.replicas"}, HandedOver(obj)); diff != "" {
		t.Fatalf("HandedOver (-want +got):\n%s", diff)
	}
}
