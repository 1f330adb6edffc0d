package merge

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A repair that would take the object's annotations beyond the API
// server's limit is not made: the API server validates the object after
// the mutating webhooks, so the undo itself, which fits, would be refused
// ("metadata.annotations: Too long") for the repair's sake. Seed 004's
// undo, its StatefulSet padded with an annotation that a tool set (in
// the object before and after the undo alike) up to the limit less what
// the repair adds, give or take one byte.
func TestRepairFitsAnnotationsLimit(t *testing.T) {
	a := NewAnalyzer()
	old := readObject(t, "seed004-undo", "before-undo.yaml")
	live := readObject(t, "seed004-undo", "live.yaml")
	revs := readObjects(t, "seed004-undo", "revisions.yaml")
	rb, err := a.DetectRollback(old, live, revs)
	if err != nil || rb == nil || rb.RepairedLastApplied == "" {
		t.Fatalf("DetectRollback = %+v, %v; want a repair", rb, err)
	}
	grows := len(rb.RepairedLastApplied) - len(live.GetAnnotations()[LastAppliedAnnotation])
	if grows <= 0 {
		t.Fatalf("the repair grows last-applied by %d bytes; the fixture needs a repair that grows it", grows)
	}
	padded := func(obj *unstructured.Unstructured, size int) *unstructured.Unstructured {
		out := obj.DeepCopy()
		ann := out.GetAnnotations()
		key := "example.com/padding"
		ann[key] = strings.Repeat("x", size-AnnotationsSize(obj)-len(key))
		out.SetAnnotations(ann)
		return out
	}
	tests := map[string]struct {
		size       int
		wantRepair bool
	}{
		"a repair that fills the annotations to the limit is made": {
			size: AnnotationsLimit - grows, wantRepair: true,
		},
		"a repair that takes the annotations one byte beyond the limit is not made": {
			size: AnnotationsLimit - grows + 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			after := padded(live, tc.size)
			if got := AnnotationsSize(after); got != tc.size || got > AnnotationsLimit {
				t.Fatalf("padded annotations take %d bytes, want %d (within %d)", got, tc.size, AnnotationsLimit)
			}
			before := padded(old, tc.size-len(live.GetAnnotations()[LastAppliedAnnotation])+len(old.GetAnnotations()[LastAppliedAnnotation]))
			rb, err := a.DetectRollback(before, after, revs)
			if err != nil || rb == nil {
				t.Fatalf("DetectRollback = %+v, %v; want an undo", rb, err)
			}
			if got := rb.RepairedLastApplied != ""; got != tc.wantRepair {
				t.Errorf("repaired = %v, want %v", got, tc.wantRepair)
			}
			if !rb.StaleLastApplied {
				t.Error("staleLastApplied = false, want true: last-applied still describes the newer manifest")
			}
			if rb.RepairedLastApplied != "" {
				fixed := after.DeepCopy()
				ann := fixed.GetAnnotations()
				ann[LastAppliedAnnotation] = rb.RepairedLastApplied
				fixed.SetAnnotations(ann)
				if got := AnnotationsSize(fixed); got > AnnotationsLimit {
					t.Errorf("repaired annotations take %d bytes, beyond %d", got, AnnotationsLimit)
				}
			}
		})
	}
}
