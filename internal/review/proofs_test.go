package review

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// provingCluster answers every removal proof with verdicts[pointer] (an
// error for a pointer it has none for) and records the pointers asked.
type provingCluster struct {
	verdicts map[string]kube.RemovalVerdict
	asked    chan string
}

func (provingCluster) Object(context.Context, schema.GroupVersionResource, string, string) (*unstructured.Unstructured, error) {
	return nil, errors.New("no object")
}

func (provingCluster) Revisions(context.Context, *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return nil, nil
}

func (provingCluster) NamespaceLabels(context.Context, string) (map[string]string, error) {
	return map[string]string{}, nil
}

var _ RemovalProver = provingCluster{}

func (c provingCluster) RemovalSticks(_ context.Context, _ schema.GroupVersionResource, _, _ *unstructured.Unstructured, pointer string, _ ...string) (kube.RemovalVerdict, error) {
	c.asked <- pointer
	v, ok := c.verdicts[pointer]
	if !ok {
		return "", errors.New("forbidden")
	}
	return v, nil
}

// labelledApply is a client-side apply of a Deployment whose labels a, b,
// c and d kubectl label set: four orphan candidates.
func labelledApply(t *testing.T) (old, new *unstructured.Unstructured) {
	t.Helper()
	object := func(image, applyTime string) *unstructured.Unstructured {
		manifest := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": "shop"},
			"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": image}}}}}}
		la, err := json.Marshal(manifest)
		if err != nil {
			t.Fatal(err)
		}
		obj := (&unstructured.Unstructured{Object: manifest}).DeepCopy()
		obj.SetAnnotations(map[string]string{lastAppliedAnnotation: string(la)})
		obj.SetLabels(map[string]string{"a": "1", "b": "1", "c": "1", "d": "1"})
		mfs := `[{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"apps/v1","time":"` + applyTime + `","fieldsType":"FieldsV1",` +
			`"fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{}}}}}}}},` +
			`{"manager":"kubectl-label","operation":"Update","apiVersion":"apps/v1","time":"2026-01-01T00:00:01Z","fieldsType":"FieldsV1",` +
			`"fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:a":{},"f:b":{},"f:c":{},"f:d":{}}}}}]`
		var entries []any
		if err := json.Unmarshal([]byte(mfs), &entries); err != nil {
			t.Fatal(err)
		}
		if err := unstructured.SetNestedSlice(obj.Object, entries, "metadata", "managedFields"); err != nil {
			t.Fatal(err)
		}
		return obj
	}
	return object("nginx:1", "2026-01-01T00:00:00Z"), object("nginx:2", "2026-01-01T00:00:02Z")
}

// Each orphan of an apply is proved alone: put back or refused, it is
// dropped; sticks, or not proved (the table's judgement stays), it is
// kept. Those kept are then proved together.
func TestProveOrphansKeepsWhatSticks(t *testing.T) {
	old, new := labelledApply(t)
	cluster := provingCluster{asked: make(chan string, 8), verdicts: map[string]kube.RemovalVerdict{
		"/metadata/labels/a": kube.RemovalSticks,
		"/metadata/labels/b": kube.RemovalPutBack,
		"/metadata/labels/c": kube.RemovalRejected,
		// d: no verdict (an error)
	}}
	r := NewReviewer(nil, policy.EvaluatorFunc(func(context.Context, *policy.Input) ([]policy.Decision, error) { return nil, nil }), cluster)
	rv, err := r.ReviewUpdate(t.Context(), Update{FieldManager: merge.ClientSideApplyManager, Old: old, New: new}, Validate)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range rv.Input.Analysis.Orphans {
		got = append(got, o.Path.String())
	}
	if diff := cmp.Diff([]string{"metadata.labels.a", "metadata.labels.d"}, got); diff != "" {
		t.Errorf("orphans (-want +got):\n%s", diff)
	}
	if len(cluster.asked) != 5 {
		t.Errorf("%d proofs asked, want 5: each of the four alone, then a and d together (a prune removes them in one write)", len(cluster.asked))
	}
}

// The webhook's own dry run (apply-hygiene-dry-run) is not reviewed: its
// proof would ask for proofs again.
func TestOwnDryRunIsNotReviewed(t *testing.T) {
	old, new := labelledApply(t)
	cluster := provingCluster{asked: make(chan string, 8)}
	r := NewReviewer(nil, policy.EvaluatorFunc(func(context.Context, *policy.Input) ([]policy.Decision, error) { return nil, nil }), cluster)
	rv, err := r.ReviewUpdate(t.Context(), Update{FieldManager: kube.DryRunFieldManager, DryRun: true, Old: old, New: new}, Validate)
	if err != nil || rv != nil {
		t.Errorf("ReviewUpdate = %v, %v; want nil, nil", rv, err)
	}
	if len(cluster.asked) != 0 {
		t.Errorf("%d proofs asked, want none", len(cluster.asked))
	}
}
