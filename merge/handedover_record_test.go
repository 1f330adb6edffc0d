package merge

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// kubectl's rollout undo of a Deployment sets its annotations to the
// restored ReplicaSet's: droppedRecord reports the record as it was when
// the undo dropped or changed it, and only for an apps Deployment (a
// StatefulSet's or DaemonSet's undo patches the template alone).
func TestDroppedRecord(t *testing.T) {
	const record = `["metadata.labels.team"]`
	object := func(apiVersion, kind string, annotations map[string]any) *unstructured.Unstructured {
		meta := map[string]any{"name": "web"}
		if annotations != nil {
			meta["annotations"] = annotations
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}}
	}
	full := strings.Repeat("x", AnnotationsLimit-len("big")-len(HandedOverAnnotation)-len(record))
	tests := map[string]struct {
		old, new *unstructured.Unstructured
		repaired string
		want     *HandoverRecord
	}{
		"dropped": {
			old:  object("apps/v1", "Deployment", map[string]any{HandedOverAnnotation: record, "a": "1"}),
			new:  object("apps/v1", "Deployment", map[string]any{"a": "1"}),
			want: &HandoverRecord{Value: record, Paths: []string{"metadata.labels.team"}, Fits: true},
		},
		"every annotation dropped": {
			old:  object("apps/v1", "Deployment", map[string]any{HandedOverAnnotation: record}),
			new:  object("apps/v1", "Deployment", nil),
			want: &HandoverRecord{Value: record, Paths: []string{"metadata.labels.team"}, Fits: true},
		},
		"changed to an older record": {
			old:  object("apps/v1", "Deployment", map[string]any{HandedOverAnnotation: `["metadata.labels.team","spec.paused"]`}),
			new:  object("apps/v1", "Deployment", map[string]any{HandedOverAnnotation: record}),
			want: &HandoverRecord{Value: `["metadata.labels.team","spec.paused"]`, Paths: []string{"metadata.labels.team", "spec.paused"}, Fits: true},
		},
		"dropped where it just fits back": {
			old:  object("apps/v1", "Deployment", map[string]any{HandedOverAnnotation: record, "big": full}),
			new:  object("apps/v1", "Deployment", map[string]any{"big": full}),
			want: &HandoverRecord{Value: record, Paths: []string{"metadata.labels.team"}, Fits: true},
		},
		"dropped where it no longer fits": {
			old:  object("apps/v1", "Deployment", map[string]any{HandedOverAnnotation: record}),
			new:  object("apps/v1", "Deployment", map[string]any{"big": full + "x"}),
			want: &HandoverRecord{Value: record, Paths: []string{"metadata.labels.team"}},
		},
		"dropped where it fits only without the repaired last-applied": {
			old:      object("apps/v1", "Deployment", map[string]any{HandedOverAnnotation: record, "big": full}),
			new:      object("apps/v1", "Deployment", map[string]any{"big": full}),
			repaired: "{}",
			want:     &HandoverRecord{Value: record, Paths: []string{"metadata.labels.team"}},
		},
		"kept": {
			old: object("apps/v1", "Deployment", map[string]any{HandedOverAnnotation: record}),
			new: object("apps/v1", "Deployment", map[string]any{HandedOverAnnotation: record, "b": "2"}),
		},
		"none before": {
			old: object("apps/v1", "Deployment", map[string]any{"a": "1"}),
			new: object("apps/v1", "Deployment", map[string]any{HandedOverAnnotation: record}),
		},
		"a StatefulSet": {
			old: object("apps/v1", "StatefulSet", map[string]any{HandedOverAnnotation: record}),
			new: object("apps/v1", "StatefulSet", nil),
		},
		"another group's Deployment": {
			old: object("example.com/v1", "Deployment", map[string]any{HandedOverAnnotation: record}),
			new: object("example.com/v1", "Deployment", nil),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, droppedRecord(tc.old, tc.new, tc.repaired)); diff != "" {
				t.Errorf("droppedRecord (-want +got):\n%s", diff)
			}
		})
	}
}

// An apply drops the record when kubectl's --save-config had copied it
// into last-applied and the manifest lacks it, or when the server-side
// applier came to own the annotations it sat among: RecordDroppedByApply
// reports it as it was, whatever the kind, but only when the apply left
// no record at all (a manifest that sets one sets it on purpose).
func TestRecordDroppedByApply(t *testing.T) {
	const record = `["metadata.labels.team"]`
	object := func(kind string, annotations map[string]any) *unstructured.Unstructured {
		meta := map[string]any{"name": "web"}
		if annotations != nil {
			meta["annotations"] = annotations
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": kind, "metadata": meta}}
	}
	full := strings.Repeat("x", AnnotationsLimit-len("big")-len(HandedOverAnnotation)-len(record))
	tests := map[string]struct {
		old, new *unstructured.Unstructured
		want     *HandoverRecord
	}{
		"dropped with last-applied's copy": {
			old:  object("Deployment", map[string]any{HandedOverAnnotation: record, LastAppliedAnnotation: `{"metadata":{"annotations":{"` + HandedOverAnnotation + `":"[]"}}}`}),
			new:  object("Deployment", map[string]any{LastAppliedAnnotation: `{}`}),
			want: &HandoverRecord{Value: record, Paths: []string{"metadata.labels.team"}, Fits: true},
		},
		"every annotation dropped": {
			old:  object("StatefulSet", map[string]any{HandedOverAnnotation: record, LastAppliedAnnotation: "{}"}),
			new:  object("StatefulSet", nil),
			want: &HandoverRecord{Value: record, Paths: []string{"metadata.labels.team"}, Fits: true, NoAnnotations: true},
		},
		"dropped where it no longer fits": {
			old:  object("Deployment", map[string]any{HandedOverAnnotation: record}),
			new:  object("Deployment", map[string]any{"big": full + "x"}),
			want: &HandoverRecord{Value: record, Paths: []string{"metadata.labels.team"}},
		},
		"dropped where it just fits back": {
			old:  object("Deployment", map[string]any{HandedOverAnnotation: record, "big": full}),
			new:  object("Deployment", map[string]any{"big": full}),
			want: &HandoverRecord{Value: record, Paths: []string{"metadata.labels.team"}, Fits: true},
		},
		"set to another record by the manifest": {
			old: object("Deployment", map[string]any{HandedOverAnnotation: `["metadata.labels.team","spec.paused"]`}),
			new: object("Deployment", map[string]any{HandedOverAnnotation: record}),
		},
		"kept": {
			old: object("Deployment", map[string]any{HandedOverAnnotation: record}),
			new: object("Deployment", map[string]any{HandedOverAnnotation: record, "b": "2"}),
		},
		"none before": {
			old: object("Deployment", map[string]any{"a": "1"}),
			new: object("Deployment", nil),
		},
		"a record that lists no path": {
			old: object("Deployment", map[string]any{HandedOverAnnotation: `[]`}),
			new: object("Deployment", nil),
		},
		// Removed on purpose: a manifest that sets it to null.
		"set to null by the manifest": {
			old: object("Deployment", map[string]any{HandedOverAnnotation: record}),
			new: object("Deployment", map[string]any{LastAppliedAnnotation: `{"metadata":{"annotations":{"` + HandedOverAnnotation + `":null}}}`}),
		},
		// Not a key of another annotation's value that names it.
		"named by another value of the manifest": {
			old:  object("Deployment", map[string]any{HandedOverAnnotation: record}),
			new:  object("Deployment", map[string]any{LastAppliedAnnotation: `{"metadata":{"annotations":{"note":"\"` + HandedOverAnnotation + `\":null"}}}`}),
			want: &HandoverRecord{Value: record, Paths: []string{"metadata.labels.team"}, Fits: true},
		},
		// A server-side applier that owns it may have it from kubectl
		// apply --server-side's migration: written back.
		"owned by the server-side applier": {
			old:  appliedRecord(object("Deployment", map[string]any{HandedOverAnnotation: record}), "platform"),
			new:  object("Deployment", nil),
			want: &HandoverRecord{Value: record, Paths: []string{"metadata.labels.team"}, Fits: true, NoAnnotations: true},
		},
		// Never over last-applied-too-large's threshold when under it.
		"over last-applied-too-large's threshold": {
			old:  object("Deployment", map[string]any{HandedOverAnnotation: record}),
			new:  object("Deployment", map[string]any{"big": strings.Repeat("x", TooLargeThreshold-len("big")-10)}),
			want: &HandoverRecord{Value: record, Paths: []string{"metadata.labels.team"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, RecordDroppedByApply(tc.old, tc.new)); diff != "" {
				t.Errorf("RecordDroppedByApply (-want +got):\n%s", diff)
			}
		})
	}
}

// appliedRecord is obj with a server-side apply entry of manager that
// owns the record.
func appliedRecord(obj *unstructured.Unstructured, manager string) *unstructured.Unstructured {
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "apps/v1",
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:` + HandedOverAnnotation + `":{}}}}`)}})
	return obj
}
