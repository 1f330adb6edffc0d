package review_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// scaleCluster stores one parent and knows the scale paths of the custom
// resources in paths (a CRD it cannot read otherwise); calls counts the
// lookups.
type scaleCluster struct {
	parent *unstructured.Unstructured
	paths  map[schema.GroupVersionResource][]string
	calls  *int
}

var _ review.ScaleCluster = scaleCluster{}

func (c scaleCluster) Object(_ context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	if c.parent.GetNamespace() != namespace || c.parent.GetName() != name {
		return nil, fmt.Errorf("reading %s %s/%s: not found", gvr.Resource, namespace, name)
	}
	return c.parent.DeepCopy(), nil
}

func (scaleCluster) Revisions(context.Context, *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return nil, nil
}

func (scaleCluster) NamespaceLabels(context.Context, string) (map[string]string, error) {
	return map[string]string{}, nil
}

func (c scaleCluster) ScaleReplicasPath(_ context.Context, gvr schema.GroupVersionResource) ([]string, error) {
	*c.calls++
	path, ok := c.paths[gvr]
	if !ok {
		return nil, fmt.Errorf("reading customresourcedefinition %s.%s: forbidden", gvr.Resource, gvr.Group)
	}
	return path, nil
}

// noScalePaths is a Cluster without the ScaleReplicasPath method (a
// captured review's snapshot).
type noScalePaths struct{ c scaleCluster }

func (n noScalePaths) Object(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	return n.c.Object(ctx, gvr, namespace, name)
}

func (noScalePaths) Revisions(context.Context, *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return nil, nil
}

func (noScalePaths) NamespaceLabels(context.Context, string) (map[string]string, error) {
	return map[string]string{}, nil
}

var (
	queuesGVR      = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "queues"}
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// applied is the object kubectl apply makes of manifest: the manifest
// with itself as last-applied.
func applied(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON([]byte(manifest)); err != nil {
		t.Fatal(err)
	}
	obj.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": manifest})
	return obj
}

// scaleRequest is alice's kubectl scale of shop/web (resource gvr) from 3
// to replicas, as the API server sends it (no count for 0).
func scaleRequest(t *testing.T, gvr schema.GroupVersionResource, replicas int64) *admissionv1.AdmissionRequest {
	t.Helper()
	scale := func(n int64) runtime.RawExtension {
		spec := map[string]any{}
		if n != 0 {
			spec["replicas"] = n
		}
		raw, err := json.Marshal(map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale",
			"metadata": map[string]any{"name": "web", "namespace": "shop"}, "spec": spec})
		if err != nil {
			t.Fatal(err)
		}
		return runtime.RawExtension{Raw: raw}
	}
	return &admissionv1.AdmissionRequest{
		UID: "1", Operation: admissionv1.Update, Name: "web", Namespace: "shop", SubResource: "scale",
		Kind:     metav1.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"},
		Resource: metav1.GroupVersionResource{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource},
		UserInfo: authenticationv1.UserInfo{Username: "alice", Groups: []string{"system:authenticated"}},
		Object:   scale(replicas), OldObject: scale(3),
	}
}

// A /scale write sets the count where the parent's kind keeps it: a
// custom resource at its CRD's specReplicasPath, a built-in kind at
// spec.replicas (without asking for a CRD). When the path cannot be known
// (the CRD unreadable, a Cluster that cannot read CRDs) nothing is
// reviewed: a guess at spec.replicas would deny or repair a field the
// scale does not touch.
func TestScaleSetsTheCountAtTheScalePath(t *testing.T) {
	engine, err := policy.New(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	queue := func(spec string) string {
		return `{"apiVersion":"example.com/v1","kind":"Queue","metadata":{"name":"web","namespace":"shop"},"spec":` + spec + `}`
	}
	sizePath := map[schema.GroupVersionResource][]string{queuesGVR: {"spec", "size"}}
	tests := map[string]struct {
		gvr       schema.GroupVersionResource
		manifest  string
		paths     map[schema.GroupVersionResource][]string
		noLookups bool // a Cluster without ScaleReplicasPath
		want      []string
		wantSpec  string // the parent's spec as scaled; "" when nothing is reviewed
		wantCalls int
	}{
		"a custom resource scaled at spec.size that the manifest owns: a person's scale to 0 is denied at spec.size": {
			gvr: queuesGVR, manifest: queue(`{"size":3}`), paths: sizePath,
			want:     []string{"imperative-edit deny [spec.size]"},
			wantSpec: `{"size":0}`, wantCalls: 1,
		},
		"a custom resource scaled at spec.size whose manifest owns an unrelated spec.replicas: the scale passes": {
			gvr: queuesGVR, manifest: queue(`{"replicas":3}`), paths: sizePath,
			wantSpec: `{"replicas":3,"size":0}`, wantCalls: 1,
		},
		"a custom resource scaled at a nested spec.workers.count that the manifest owns": {
			gvr: queuesGVR, manifest: queue(`{"replicas":3,"workers":{"count":3,"image":"worker:1"}}`),
			paths:    map[schema.GroupVersionResource][]string{queuesGVR: {"spec", "workers", "count"}},
			want:     []string{"imperative-edit deny [spec.workers.count]"},
			wantSpec: `{"replicas":3,"workers":{"count":0,"image":"worker:1"}}`, wantCalls: 1,
		},
		"a custom resource whose stored parent has a null on the path: nothing is reviewed": {
			gvr: queuesGVR, manifest: queue(`{"replicas":3,"workers":null}`),
			paths: map[schema.GroupVersionResource][]string{queuesGVR: {"spec", "workers", "count"}}, wantCalls: 1,
		},
		"a custom resource whose CRD cannot be read: nothing is reviewed": {
			gvr: queuesGVR, manifest: queue(`{"replicas":3}`), wantCalls: 1,
		},
		"a custom resource and a Cluster that reads no CRD: nothing is reviewed": {
			gvr: queuesGVR, manifest: queue(`{"replicas":3}`), paths: sizePath, noLookups: true,
		},
		"a Deployment keeps spec.replicas, without a CRD lookup": {
			gvr:      deploymentsGVR,
			manifest: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"replicas":3}}`,
			want:     []string{"imperative-edit deny [spec.replicas]"},
			wantSpec: `{"replicas":0}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			calls := 0
			var cluster review.Cluster = scaleCluster{parent: applied(t, tc.manifest), paths: tc.paths, calls: &calls}
			if tc.noLookups {
				cluster = noScalePaths{cluster.(scaleCluster)}
			}
			r := review.NewReviewer(nil, engine, cluster)
			rv, err := r.Review(t.Context(), scaleRequest(t, tc.gvr, 0), review.Validate)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			gotSpec := ""
			if rv != nil {
				for _, d := range rv.Decisions {
					got = append(got, fmt.Sprintf("%s %s [%s]", d.Rule, d.Action, strings.Join(d.Paths, " ")))
				}
				spec, err := json.Marshal(rv.New.Object["spec"])
				if err != nil {
					t.Fatal(err)
				}
				gotSpec = string(spec)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSpec, gotSpec); diff != "" {
				t.Errorf("the scaled parent's spec (-want +got):\n%s", diff)
			}
			if calls != tc.wantCalls {
				t.Errorf("%d lookups of the scale path, want %d", calls, tc.wantCalls)
			}
		})
	}
}
