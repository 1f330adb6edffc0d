package orphanproof

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// verdicts answers each removal with its verdict by pointer (an error for
// a pointer it has none for) and counts the pointers asked.
// It checks that it is asked about the removal from live to target, and
// panics for the pointer panicOn.
type verdicts struct {
	t             *testing.T
	live, target  *unstructured.Unstructured
	by            map[string]kube.RemovalVerdict
	panicOn       string
	mu            sync.Mutex
	asked         int
	running, most int
}

func (v *verdicts) RemovalSticks(_ context.Context, _ schema.GroupVersionResource, live, target *unstructured.Unstructured, pointer string, _ ...string) (kube.RemovalVerdict, error) {
	if live != v.live || target != v.target {
		v.t.Errorf("asked about the removal from %s to %s, want from %s to %s", live.GetName(), target.GetName(), v.live.GetName(), v.target.GetName())
	}
	v.mu.Lock()
	v.asked++
	v.running++
	v.most = max(v.most, v.running)
	v.mu.Unlock()
	defer func() {
		v.mu.Lock()
		v.running--
		v.mu.Unlock()
	}()
	time.Sleep(time.Millisecond)
	if pointer == v.panicOn {
		panic("boom")
	}
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
		parallel  int
		panicOn   string
		want      []string
		wantAsked int
		wantPanic bool
	}{{
		name:    "a removal the server puts back or refuses is no orphan; one it keeps is",
		orphans: 3,
		verdicts: map[string]kube.RemovalVerdict{"/metadata/labels/l0": kube.RemovalSticks,
			"/metadata/labels/l1": kube.RemovalPutBack, "/metadata/labels/l2": kube.RemovalRejected},
		want:      []string{"metadata.labels.l0"},
		wantAsked: 3,
	}, {
		name:      "one at a time, as the audit asks",
		orphans:   4,
		parallel:  1,
		verdicts:  map[string]kube.RemovalVerdict{"/metadata/labels/l0": kube.RemovalPutBack},
		want:      []string{"metadata.labels.l1", "metadata.labels.l2", "metadata.labels.l3"},
		wantAsked: 4,
	}, {
		name:      "a proof that panics panics on the caller's goroutine, after the others",
		orphans:   3,
		panicOn:   "/metadata/labels/l1",
		wantAsked: 3,
		wantPanic: true,
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
			target, an := labelled(t, tc.orphans)
			live := target.DeepCopy()
			live.SetName("live")
			v := &verdicts{t: t, live: live, target: target, by: tc.verdicts, panicOn: tc.panicOn}
			var prover Prover = v
			if tc.noProver {
				prover = nil
			}
			parallel := cmp.Or(tc.parallel, MaxProofs)
			panicked := func() (p any) {
				defer func() { p = recover() }()
				Keep(context.Background(), prover, gvr, live, target, an, parallel)
				return nil
			}()
			if (panicked != nil) != tc.wantPanic {
				t.Fatalf("panicked: %v, want a panic %v", panicked, tc.wantPanic)
			}
			if tc.wantPanic {
				if v.asked != tc.wantAsked {
					t.Errorf("asked %d removals before the panic, want %d", v.asked, tc.wantAsked)
				}
				return
			}
			if v.most > parallel {
				t.Errorf("%d proofs ran at once, want at most %d", v.most, parallel)
			}
			var got []string
			for _, o := range an.Orphans {
				got = append(got, o.Path.String())
			}
			if diff := gocmp.Diff(tc.want, got); diff != "" {
				t.Errorf("orphans kept (-want +got):\n%s", diff)
			}
			if v.asked != tc.wantAsked {
				t.Errorf("asked %d removals, want %d", v.asked, tc.wantAsked)
			}
		})
	}
}

// together answers a removal alone with RemovalSticks and one together
// with others (with not empty) with its verdict, and records the last
// call's pointers.
type together struct {
	verdict kube.RemovalVerdict
	err     error
	asked   [][]string
}

func (p *together) RemovalSticks(_ context.Context, _ schema.GroupVersionResource, _, _ *unstructured.Unstructured, pointer string, with ...string) (kube.RemovalVerdict, error) {
	p.asked = append(p.asked, append([]string{pointer}, with...))
	if len(with) == 0 {
		return kube.RemovalSticks, nil
	}
	return p.verdict, p.err
}

// A prune removes every orphan with a pointer in one write: two that each
// stick alone can be refused together (the only two ports of a Service).
func TestKeepProvesRemovalsTogether(t *testing.T) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	for _, tc := range []struct {
		name       string
		pointers   []string
		verdict    kube.RemovalVerdict
		err        error
		wantJoint  []string
		wantRemedy []string
	}{{
		name:       "refused together: no orphan keeps a remedy that writes",
		pointers:   []string{"/metadata/labels/l0", "/metadata/labels/l1", ""},
		verdict:    kube.RemovalRejected,
		wantJoint:  []string{"/metadata/labels/l0", "/metadata/labels/l1", "/spec/serviceAccount"},
		wantRemedy: []string{"", "", ""},
	}, {
		name:       "kept together: each keeps its remedy",
		pointers:   []string{"/metadata/labels/l0", "/metadata/labels/l1"},
		verdict:    kube.RemovalSticks,
		wantJoint:  []string{"/metadata/labels/l0", "/metadata/labels/l1", "/spec/serviceAccount"},
		wantRemedy: []string{"/metadata/labels/l0", "/metadata/labels/l1"},
	}, {
		name:       "not proved together: each keeps its remedy",
		pointers:   []string{"/metadata/labels/l0", "/metadata/labels/l1"},
		err:        errors.New("forbidden"),
		wantJoint:  []string{"/metadata/labels/l0", "/metadata/labels/l1", "/spec/serviceAccount"},
		wantRemedy: []string{"/metadata/labels/l0", "/metadata/labels/l1"},
	}, {
		name:       "one removable orphan: no second proof",
		pointers:   []string{"/metadata/labels/l0", ""},
		verdict:    kube.RemovalRejected,
		wantRemedy: []string{"/metadata/labels/l0", ""},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			target, an := labelled(t, len(tc.pointers))
			for i, ptr := range tc.pointers {
				if ptr == "" {
					continue
				}
				an.Orphans[i].Pointer, an.Orphans[i].RemovePatch = ptr, `[{"op":"remove","path":"`+ptr+`"}]`
			}
			if len(tc.wantJoint) > 0 {
				an.Orphans[1].RemovedWith = []string{"/spec/serviceAccount"}
			}
			p := &together{verdict: tc.verdict, err: tc.err}
			Keep(context.Background(), p, gvr, target.DeepCopy(), target, an, 1)
			var joint []string
			for _, a := range p.asked {
				if len(a) > 1 {
					joint = a
				}
			}
			if diff := gocmp.Diff(tc.wantJoint, joint); diff != "" {
				t.Errorf("removals proved together (-want +got):\n%s", diff)
			}
			var remedy []string
			for _, o := range an.Orphans {
				if o.Pointer == "" && (o.RemovePatch != "" || len(o.RemovedWith) > 0) || o.Pointer != "" && o.RemovePatch == "" {
					t.Errorf("orphan %s: pointer %q, remove patch %q, removed with %v: all or none", o.Path, o.Pointer, o.RemovePatch, o.RemovedWith)
				}
				remedy = append(remedy, o.Pointer)
			}
			if diff := gocmp.Diff(tc.wantRemedy, remedy); diff != "" {
				t.Errorf("orphans' pointers (-want +got):\n%s", diff)
			}
			if len(an.Orphans) != len(tc.pointers) {
				t.Errorf("%d orphans reported, want %d: a removal refused together is still an orphan", len(an.Orphans), len(tc.pointers))
			}
		})
	}
}
