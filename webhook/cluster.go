package webhook

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
)

// Cluster reads what a review needs beyond the request itself; a
// *kube.Cluster on the API server is the one the server uses.
type Cluster interface {
	// Object returns the object gvr/namespace/name (the parent of a /scale
	// request).
	Object(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error)
	// Revisions returns the ReplicaSets (Deployment) or ControllerRevisions
	// (StatefulSet, DaemonSet) that obj controls.
	Revisions(ctx context.Context, obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error)
	// NamespaceLabels returns the labels of a namespace.
	NamespaceLabels(ctx context.Context, name string) (map[string]string, error)
}

var _ Cluster = (*kube.Cluster)(nil)
