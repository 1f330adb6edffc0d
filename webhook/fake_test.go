package webhook

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// fakeCluster answers from a captured snapshot (testdata/reviews/
// <scenario>.cluster.json, written by hack/capture-reviews).
type fakeCluster struct {
	objects []*unstructured.Unstructured
	labels  map[string]string
}

var (
	_ Cluster             = (*fakeCluster)(nil)
	_ review.ScaleCluster = (*fakeCluster)(nil)
)

func loadCluster(t *testing.T, path string) *fakeCluster {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	list := &unstructured.UnstructuredList{}
	if err := list.UnmarshalJSON(raw); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	c := &fakeCluster{}
	for i := range list.Items {
		c.objects = append(c.objects, &list.Items[i])
	}
	return c
}

func (c *fakeCluster) Object(_ context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	for _, o := range c.objects {
		if strings.EqualFold(o.GetKind()+"s", gvr.Resource) && o.GetNamespace() == namespace && o.GetName() == name {
			return o.DeepCopy(), nil
		}
	}
	return nil, fmt.Errorf("reading %s %s/%s: not found", gvr.Resource, namespace, name)
}

// ScaleReplicasPath reads the CRD <resource>.<group> of the snapshot, as
// kube.Cluster reads it from the API server.
func (c *fakeCluster) ScaleReplicasPath(_ context.Context, gvr schema.GroupVersionResource) ([]string, error) {
	for _, o := range c.objects {
		if o.GetKind() == "CustomResourceDefinition" && o.GetName() == gvr.Resource+"."+gvr.Group {
			return kube.SpecReplicasPath(o, gvr.Version)
		}
	}
	return nil, fmt.Errorf("reading customresourcedefinition %s.%s: not found", gvr.Resource, gvr.Group)
}

func (c *fakeCluster) Revisions(_ context.Context, obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, o := range c.objects {
		if (o.GetKind() == "ReplicaSet" || o.GetKind() == "ControllerRevision") && controlledBy(o, obj) {
			out = append(out, o.DeepCopy())
		}
	}
	return out, nil
}

func (c *fakeCluster) NamespaceLabels(_ context.Context, name string) (map[string]string, error) {
	labels := map[string]string{"kubernetes.io/metadata.name": name}
	for k, v := range c.labels {
		labels[k] = v
	}
	return labels, nil
}

func controlledBy(obj, owner *unstructured.Unstructured) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.UID == owner.GetUID()
}

// lastAppliedAnnotation is the annotation the tests read and corrupt.
const lastAppliedAnnotation = merge.LastAppliedAnnotation

func lastApplied(obj *unstructured.Unstructured) string {
	return obj.GetAnnotations()[lastAppliedAnnotation]
}
