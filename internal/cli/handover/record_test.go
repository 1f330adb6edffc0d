package handover_test

import (
	"bytes"
	"context"
	"encoding/json"
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

// patched is a cluster holding one object; it keeps the last patch.
type patched struct {
	obj   *unstructured.Unstructured
	patch *[]byte
}

func (c patched) Get(context.Context, string, string, string) (*unstructured.Unstructured, error) {
	return c.obj, nil
}

func (c patched) Patch(_ context.Context, _ string, _ *unstructured.Unstructured, _ types.PatchType, patch []byte, _ metav1.PatchOptions) error {
	*c.patch = patch
	return nil
}

// The hand-over's one guarded patch also records the paths it handed
// over (merge.HandedOverAnnotation), added to those an earlier hand-over
// recorded, sorted, each once, so that the orphan facts leave their new
// writer's values alone; a record that is no JSON list is refused, and
// nothing is written.
func TestHandoverRecordsThePaths(t *testing.T) {
	const lastApplied = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"team":"a","tier":"web"},"name":"web","namespace":"shop"},"spec":{"replicas":3}}`
	tests := map[string]struct {
		record  string
		args    []string
		want    string
		wantErr string
	}{
		"a record that is no list is refused, not overwritten": {record: `spec.replicas`, args: []string{"metadata.labels[team]"},
			wantErr: "Deployment shop/web: its apply-hygiene.io/handed-over annotation is not a JSON list of paths: fix or delete it first; nothing written"},
		"the first hand-over":                   {args: []string{"spec.replicas", "metadata.labels[team]"}, want: `["metadata.labels.team","spec.replicas"]`},
		"after an earlier one, written by hand": {record: `["metadata.labels[tier]"]`, args: []string{"spec.replicas"}, want: `["metadata.labels[tier]","spec.replicas"]`},
		"a path recorded before":                {record: `["spec.replicas"]`, args: []string{"spec.replicas"}, want: `["spec.replicas"]`},
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
			var patch []byte
			connect := func(*genericclioptions.ConfigFlags) (handover.Cluster, error) { return patched{web, &patch}, nil }
			read := func(string, io.Reader) ([]*unstructured.Unstructured, error) { return nil, nil }
			cmd := handover.NewCmd(genericiooptions.IOStreams{Out: &bytes.Buffer{}}, connect, read)
			cmd.SetArgs(append([]string{"deployment/web", "-n", "shop"}, tc.args...))
			err := cmd.Execute()
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || patch != nil {
					t.Fatalf("error %v (patch %s), want %q and no patch", err, patch, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ops []map[string]any
			if err := json.Unmarshal(patch, &ops); err != nil {
				t.Fatalf("the patch %s: %v", patch, err)
			}
			want := map[string]any{"op": "add", "path": "/metadata/annotations/apply-hygiene.io~1handed-over", "value": tc.want}
			if len(ops) != 3 || !cmp.Equal(ops[2], want) {
				t.Fatalf("patch %s, want its third operation %v", patch, want)
			}
			if ops[0]["op"] != "test" || ops[1]["op"] != "replace" {
				t.Fatalf("patch %s, want the guard and last-applied's replacement first", patch)
			}
		})
	}
}
