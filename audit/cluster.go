package audit

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
)

// Cluster reads what a scan needs besides the objects themselves.
type Cluster interface {
	// Revisions returns the ReplicaSets (Deployment) or ControllerRevisions
	// (StatefulSet, DaemonSet) that obj controls.
	Revisions(ctx context.Context, obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error)
	// NamespaceLabels returns the labels of a namespace.
	NamespaceLabels(ctx context.Context, name string) (map[string]string, error)
}

// kube.Cluster is the Cluster on the API server: the same reads as
// admission, so the audit and the webhook find revisions the same way.
var _ Cluster = (*kube.Cluster)(nil)
