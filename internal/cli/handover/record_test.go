package handover_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/handover"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// patched is a cluster holding one object; it keeps each patch sent,
// and refuses those of the manager fail.
type patched struct {
	obj  *unstructured.Unstructured
	sent *[]sentPatch
	fail string
}

// sentPatch is a patch as sent, with its field manager.
type sentPatch struct {
	Manager string
	Ops     []map[string]any
}

func (c patched) Get(context.Context, string, string, string) (*unstructured.Unstructured, error) {
	return c.obj, nil
}

func (c patched) Patch(_ context.Context, _ string, _ *unstructured.Unstructured, _ types.PatchType, patch []byte, opts metav1.PatchOptions) error {
	var ops []map[string]any
	if err := json.Unmarshal(patch, &ops); err != nil {
		return err
	}
	*c.sent = append(*c.sent, sentPatch{opts.FieldManager, ops})
	if opts.FieldManager == c.fail {
		return errors.New("the server refused it")
	}
	return nil
}

// The hand-over records the paths it handed over
// (merge.HandedOverAnnotation), added to those an earlier hand-over
// recorded, sorted, each once, so that the orphan facts leave their new
// writer's values alone: as its own field manager, before last-applied's
// patch, each guarded by a test of last-applied as read. A record that is
// no JSON list is refused, and nothing is written; when last-applied's
// patch fails, the record is taken back.
func TestHandoverRecordsThePaths(t *testing.T) {
	const lastApplied = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"team":"a","tier":"web"},"name":"web","namespace":"shop"},"spec":{"replicas":3}}`
	const recordPath = "/metadata/annotations/apply-hygiene.io~1handed-over"
	const lastAppliedPath = "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"
	guard := map[string]any{"op": "test", "path": lastAppliedPath, "value": lastApplied}
	// written are the two patches of a hand-over of spec.replicas (and of
	// metadata.labels[team] with team).
	written := func(record string, team bool) []sentPatch {
		labels := `{"team":"a","tier":"web"}`
		if team {
			labels = `{"tier":"web"}`
		}
		return []sentPatch{
			{handover.RecordManager, []map[string]any{guard, {"op": "add", "path": recordPath, "value": record}}},
			{merge.ClientSideApplyManager, []map[string]any{guard, {"op": "replace", "path": lastAppliedPath,
				"value": `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":` + labels + `,"name":"web","namespace":"shop"}}` + "\n"}}},
		}
	}
	tests := map[string]struct {
		record  string
		args    []string
		fail    string
		want    []sentPatch
		wantErr string
	}{
		"a record that is no list is refused, not overwritten": {record: `spec.replicas`, args: []string{"metadata.labels[team]"},
			wantErr: "Deployment shop/web: its apply-hygiene.io/handed-over annotation is not a JSON list of paths: fix or delete it first; nothing written"},
		"the first hand-over": {args: []string{"spec.replicas", "metadata.labels[team]"}, want: written(`["metadata.labels.team","spec.replicas"]`, true)},
		"after an earlier one, written by hand": {record: `["metadata.labels[team]"]`, args: []string{"spec.replicas"},
			want: written(`["metadata.labels[team]","spec.replicas"]`, false)},
		"a path recorded before": {record: `["spec.replicas"]`, args: []string{"spec.replicas"}, want: written(`["spec.replicas"]`, false)},
		"last-applied's patch refused: the record taken back": {args: []string{"spec.replicas", "metadata.labels[team]"}, fail: merge.ClientSideApplyManager,
			want: append(written(`["metadata.labels.team","spec.replicas"]`, true), sentPatch{handover.RecordManager, []map[string]any{
				{"op": "test", "path": recordPath, "value": `["metadata.labels.team","spec.replicas"]`}, {"op": "remove", "path": recordPath}}}),
			wantErr: "writing the last-applied of Deployment shop/web: the server refused it"},
		"... and an earlier record put back": {record: `["metadata.labels[team]"]`, args: []string{"spec.replicas"}, fail: merge.ClientSideApplyManager,
			want: append(written(`["metadata.labels[team]","spec.replicas"]`, false), sentPatch{handover.RecordManager, []map[string]any{
				{"op": "test", "path": recordPath, "value": `["metadata.labels[team]","spec.replicas"]`}, {"op": "replace", "path": recordPath, "value": `["metadata.labels[team]"]`}}}),
			wantErr: "writing the last-applied of Deployment shop/web: the server refused it"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			web := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": "web", "namespace": "shop", "labels": map[string]any{"team": "a", "tier": "web"}}, "spec": map[string]any{"replicas": int64(3)}}}
			annotations := map[string]string{merge.LastAppliedAnnotation: lastApplied}
			if tc.record != "" {
				annotations[merge.HandedOverAnnotation] = tc.record
			}
			web.SetAnnotations(annotations)
			var sent []sentPatch
			connect := func(*genericclioptions.ConfigFlags) (handover.Cluster, error) {
				return patched{web, &sent, tc.fail}, nil
			}
			read := func(string, io.Reader) ([]*unstructured.Unstructured, error) { return nil, nil }
			cmd := handover.NewCmd(genericiooptions.IOStreams{Out: &bytes.Buffer{}}, connect, read)
			cmd.SilenceUsage, cmd.SilenceErrors = true, true
			cmd.SetArgs(append([]string{"deployment/web", "-n", "shop"}, tc.args...))
			err := cmd.Execute()
			if msg := fmt.Sprint(err); tc.wantErr != "" && msg != tc.wantErr || tc.wantErr == "" && err != nil {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, sent); diff != "" {
				t.Errorf("patches sent (-want +got):\n%s", diff)
			}
		})
	}
}
