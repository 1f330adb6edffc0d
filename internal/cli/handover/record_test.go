package handover_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/handover"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// stored is a cluster holding one object, which it patches as the API
// server does a JSON patch (a failed test fails the patch; each stored
// change takes a new resourceVersion). It keeps each patch sent, refuses
// those of the manager refuse, and runs between (another writer) once,
// right before the second patch.
type stored struct {
	obj     *unstructured.Unstructured
	sent    []sentPatch
	refuse  string
	between func(annotations map[string]string)
}

// sentPatch is a patch as sent, with its field manager.
type sentPatch struct {
	Manager string
	Ops     []map[string]any
}

func (c *stored) Get(context.Context, string, string, string) (*unstructured.Unstructured, error) {
	return c.obj.DeepCopy(), nil
}

func (c *stored) Patch(_ context.Context, _ string, _ *unstructured.Unstructured, _ types.PatchType, patch []byte, opts metav1.PatchOptions) (*unstructured.Unstructured, error) {
	var ops []map[string]any
	if err := json.Unmarshal(patch, &ops); err != nil {
		return nil, err
	}
	c.sent = append(c.sent, sentPatch{opts.FieldManager, ops})
	if len(c.sent) == 2 && c.between != nil {
		annotations := c.obj.GetAnnotations()
		c.between(annotations)
		c.store(annotations)
	}
	if opts.FieldManager == c.refuse {
		return nil, errors.New("the server refused it")
	}
	doc, err := json.Marshal(c.obj.Object)
	if err != nil {
		return nil, err
	}
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, err
	}
	if doc, err = p.Apply(doc); err != nil {
		return nil, fmt.Errorf("the patch: %w", err)
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(doc); err != nil {
		return nil, err
	}
	if len(opts.DryRun) == 0 {
		c.store(out.GetAnnotations())
	}
	return c.obj.DeepCopy(), nil
}

// store keeps annotations as the object's, with a new resourceVersion.
func (c *stored) store(annotations map[string]string) {
	c.obj.SetAnnotations(annotations)
	rv, _ := strconv.Atoi(c.obj.GetResourceVersion())
	c.obj.SetResourceVersion(strconv.Itoa(rv + 1))
}

// The hand-over records the paths it handed over
// (merge.HandedOverAnnotation), added to those an earlier hand-over
// recorded, sorted, each once, so that the orphan facts leave their new
// writer's values alone: as its own field manager, before last-applied's
// patch, each guarded by a test of last-applied as read, the second also
// by one of the record as written. A record that is no JSON list is
// refused, and nothing is written. When last-applied's patch fails, the
// record is taken back if nothing changed the object since it was
// written; never one that another hand-over may share.
func TestHandoverRecordsThePaths(t *testing.T) {
	const lastApplied = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"team":"a","tier":"web"},"name":"web","namespace":"shop"},"spec":{"replicas":3}}`
	const withoutReplicas = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"team":"a","tier":"web"},"name":"web","namespace":"shop"}}` + "\n"
	const recordPath = "/metadata/annotations/apply-hygiene.io~1handed-over"
	const lastAppliedPath = "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"
	guard := map[string]any{"op": "test", "path": lastAppliedPath, "value": lastApplied}
	// written are the two patches of a hand-over of spec.replicas (and of
	// metadata.labels[team] with team).
	written := func(record string, team bool) []sentPatch {
		without := withoutReplicas
		if team {
			without = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"tier":"web"},"name":"web","namespace":"shop"}}` + "\n"
		}
		return []sentPatch{
			{merge.HandoverRecordManager, []map[string]any{guard, {"op": "add", "path": recordPath, "value": record}}},
			{merge.ClientSideApplyManager, []map[string]any{guard, {"op": "test", "path": recordPath, "value": record},
				{"op": "replace", "path": lastAppliedPath, "value": without}}},
		}
	}
	const recordChanged = "Deployment shop/web: its record of hand-overs changed since it was read (another hand-over in between?); nothing written, run handover again: the patch: "
	tests := map[string]struct {
		record  string
		args    []string
		refuse  string
		between func(annotations map[string]string)
		// want are the patches sent; nil: not checked.
		want    []sentPatch
		wantErr string
		// wantRecord and wantLastApplied are the annotations as stored
		// after.
		wantRecord, wantLastApplied string
	}{
		"a record that is no list is refused, not overwritten": {record: `spec.replicas`, args: []string{"metadata.labels[team]"},
			wantErr:    "Deployment shop/web: its apply-hygiene.io/handed-over annotation is not a JSON list of paths: fix or delete it first; nothing written",
			wantRecord: `spec.replicas`, wantLastApplied: lastApplied},
		"the first hand-over": {args: []string{"spec.replicas", "metadata.labels[team]"}, want: written(`["metadata.labels.team","spec.replicas"]`, true),
			wantRecord:      `["metadata.labels.team","spec.replicas"]`,
			wantLastApplied: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"tier":"web"},"name":"web","namespace":"shop"}}` + "\n"},
		"after an earlier one, written by hand": {record: `["metadata.labels[team]"]`, args: []string{"spec.replicas"},
			want: written(`["metadata.labels[team]","spec.replicas"]`, false), wantRecord: `["metadata.labels[team]","spec.replicas"]`, wantLastApplied: withoutReplicas},
		"a path recorded before": {record: `["spec.replicas"]`, args: []string{"spec.replicas"}, want: written(`["spec.replicas"]`, false),
			wantRecord: `["spec.replicas"]`, wantLastApplied: withoutReplicas},
		"last-applied's patch refused: the record taken back": {args: []string{"spec.replicas", "metadata.labels[team]"}, refuse: merge.ClientSideApplyManager,
			want: append(written(`["metadata.labels.team","spec.replicas"]`, true), sentPatch{merge.HandoverRecordManager, []map[string]any{
				{"op": "test", "path": "/metadata/resourceVersion", "value": "2"},
				{"op": "test", "path": recordPath, "value": `["metadata.labels.team","spec.replicas"]`}, {"op": "remove", "path": recordPath}}}),
			wantErr:         "writing the last-applied of Deployment shop/web: the server refused it",
			wantLastApplied: lastApplied},
		"... and an earlier record put back": {record: `["metadata.labels[team]"]`, args: []string{"spec.replicas"}, refuse: merge.ClientSideApplyManager,
			wantErr:    "writing the last-applied of Deployment shop/web: the server refused it",
			wantRecord: `["metadata.labels[team]"]`, wantLastApplied: lastApplied},
		// Two people hand over at once: the other's record, written over
		// this one's, fails this one's last-applied patch, which would
		// otherwise drop spec.replicas with no record of it.
		"another hand-over's record in between": {args: []string{"spec.replicas"},
			between: func(a map[string]string) { a[merge.HandedOverAnnotation] = `["metadata.labels.team"]` },
			wantErr: recordChanged + `testing value /metadata/annotations/apply-hygiene.io~1handed-over failed: test failed`,
			// The other's last-applied patch follows.
			wantRecord: `["metadata.labels.team"]`, wantLastApplied: lastApplied},
		// The other handed over the same path and finished first: the
		// record both wrote is the other's too, and stays.
		"another hand-over of the same path, finished in between": {args: []string{"spec.replicas"},
			between: func(a map[string]string) { a[merge.LastAppliedAnnotation] = withoutReplicas },
			wantErr: "Deployment shop/web: last-applied changed since it was read (an apply in between?); the record of the hand-over it wrote stays, run handover again: " +
				"the patch: testing value /metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration failed: test failed",
			wantRecord: `["spec.replicas"]`, wantLastApplied: withoutReplicas},
		// A status update moved the object on before last-applied's patch
		// was refused: the record may be another's now, and stays.
		"last-applied's patch refused after a status update": {args: []string{"spec.replicas"}, refuse: merge.ClientSideApplyManager,
			between:    func(map[string]string) {},
			wantErr:    "writing the last-applied of Deployment shop/web: the server refused it; the record of the hand-over it wrote stays",
			wantRecord: `["spec.replicas"]`, wantLastApplied: lastApplied},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			web := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": "web", "namespace": "shop", "resourceVersion": "1", "labels": map[string]any{"team": "a", "tier": "web"}},
				"spec":     map[string]any{"replicas": int64(3)}}}
			annotations := map[string]string{merge.LastAppliedAnnotation: lastApplied}
			if tc.record != "" {
				annotations[merge.HandedOverAnnotation] = tc.record
			}
			web.SetAnnotations(annotations)
			cluster := &stored{obj: web, refuse: tc.refuse, between: tc.between}
			connect := func(*genericclioptions.ConfigFlags) (handover.Cluster, error) { return cluster, nil }
			read := func(string, io.Reader) ([]*unstructured.Unstructured, error) { return nil, nil }
			cmd := handover.NewCmd(genericiooptions.IOStreams{Out: &bytes.Buffer{}}, connect, read)
			cmd.SilenceUsage, cmd.SilenceErrors = true, true
			cmd.SetArgs(append([]string{"deployment/web", "-n", "shop"}, tc.args...))
			err := cmd.Execute()
			if msg := fmt.Sprint(err); tc.wantErr != "" && msg != tc.wantErr || tc.wantErr == "" && err != nil {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, cluster.sent); tc.want != nil && diff != "" {
				t.Errorf("patches sent (-want +got):\n%s", diff)
			}
			got := web.GetAnnotations()
			if got[merge.HandedOverAnnotation] != tc.wantRecord || got[merge.LastAppliedAnnotation] != tc.wantLastApplied {
				t.Errorf("stored record %q and last-applied %q, want %q and %q", got[merge.HandedOverAnnotation], got[merge.LastAppliedAnnotation], tc.wantRecord, tc.wantLastApplied)
			}
		})
	}
}
