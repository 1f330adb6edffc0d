package orphanproof

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// verdicts answers each removal with its verdict by pointer (an error for
// a pointer it has none for) and counts the pointers asked.
type verdicts struct {
	by    map[string]kube.RemovalVerdict
	mu    sync.Mutex
	asked int
}

func (v *verdicts) RemovalSticks(_ context.Context, _ schema.GroupVersionResource, _, _ *unstructured.Unstructured, pointer string, _ ...string) (kube.RemovalVerdict, error) {
	v.mu.Lock()
	v.asked++
	v.mu.Unlock()
	if got, ok := v.by[pointer]; ok {
		return got, nil
	}
	return "", errors.New("forbidden")
}

// labelled is a Deployment with n labels l0…l(n-1) and an analysis that
// finds each an orphan.
func labelled(t *testing.T, n int) (*unstructured.Unstructured, *merge.Analysis) {
	t.Helper()
	labels := map[string]any{}
	an := &merge.Analysis{}
	for i := range n {
		key := fmt.Sprintf("l%d", i)
		labels[key] = "x"
		p, err := merge.ParsePath("metadata.labels." + key)
		if err != nil {
			t.Fatal(err)
		}
		an.Orphans = append(an.Orphans, merge.FieldFact{Path: p})
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "labels": labels}}}
	return obj, an
}

func TestKeep(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	for _, tc := range []struct {
		name      string
		orphans   int
		verdicts  map[string]kube.RemovalVerdict
		noProver  bool
		want      []string
		wantAsked int
	}{{
		name:    "a removal the server puts back or refuses is no orphan; one it keeps is",
		orphans: 3,
		verdicts: map[string]kube.RemovalVerdict{"/metadata/labels/l0": kube.RemovalSticks,
			"/metadata/labels/l1": kube.RemovalPutBack, "/metadata/labels/l2": kube.RemovalRejected},
		want:      []string{"metadata.labels.l0"},
		wantAsked: 3,
	}, {
		name:      "an orphan whose proof fails keeps merge's judgement",
		orphans:   2,
		verdicts:  map[string]kube.RemovalVerdict{"/metadata/labels/l1": kube.RemovalPutBack},
		want:      []string{"metadata.labels.l0"},
		wantAsked: 2,
	}, {
		name:      "past MaxProofs the orphans are not asked about and stay",
		orphans:   MaxProofs + 2,
		verdicts:  map[string]kube.RemovalVerdict{"/metadata/labels/l0": kube.RemovalPutBack, "/metadata/labels/l9": kube.RemovalPutBack},
		want:      []string{"metadata.labels.l1", "metadata.labels.l2", "metadata.labels.l3", "metadata.labels.l4", "metadata.labels.l5", "metadata.labels.l6", "metadata.labels.l7", "metadata.labels.l8", "metadata.labels.l9"},
		wantAsked: MaxProofs,
	}, {
		name:     "without a prover every orphan stays",
		orphans:  2,
		noProver: true,
		want:     []string{"metadata.labels.l0", "metadata.labels.l1"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			obj, an := labelled(t, tc.orphans)
			v := &verdicts{by: tc.verdicts}
			var prover Prover = v
			if tc.noProver {
				prover = nil
			}
			Keep(context.Background(), prover, gvr, obj, obj, an)
			var got []string
			for _, o := range an.Orphans {
				got = append(got, o.Path.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("orphans kept (-want +got):\n%s", diff)
			}
			if v.asked != tc.wantAsked {
				t.Errorf("asked %d removals, want %d", v.asked, tc.wantAsked)
			}
		})
	}
}
