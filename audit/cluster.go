package audit

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Cluster reads what a scan needs besides the objects themselves.
type Cluster interface {
	// Revisions returns the ReplicaSets (Deployment) or ControllerRevisions
	// (StatefulSet, DaemonSet) that obj controls.
	Revisions(ctx context.Context, obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error)
	// NamespaceLabels returns the labels of a namespace.
	NamespaceLabels(ctx context.Context, name string) (map[string]string, error)
}

var (
	replicaSetsGVR         = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	controllerRevisionsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}
	namespacesGVR          = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// APICluster is a Cluster on a dynamic client.
type APICluster struct {
	client dynamic.Interface
}

var _ Cluster = (*APICluster)(nil)

// NewAPICluster returns a Cluster that reads with client.
func NewAPICluster(client dynamic.Interface) *APICluster { return &APICluster{client: client} }

// Revisions implements Cluster: it lists by the object's selector and keeps
// what the object controls.
func (c *APICluster) Revisions(ctx context.Context, obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	gvr := controllerRevisionsGVR
	if obj.GetKind() == "Deployment" {
		gvr = replicaSetsGVR
	}
	selector, err := labelSelector(obj)
	if err != nil {
		return nil, err
	}
	list, err := c.client.Resource(gvr).Namespace(obj.GetNamespace()).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("listing %s of %s %s/%s: %w", gvr.Resource, obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	var owned []*unstructured.Unstructured
	for i := range list.Items {
		if ref := metav1.GetControllerOfNoCopy(&list.Items[i]); ref != nil && ref.UID == obj.GetUID() {
			owned = append(owned, &list.Items[i])
		}
	}
	return owned, nil
}

// NamespaceLabels implements Cluster.
func (c *APICluster) NamespaceLabels(ctx context.Context, name string) (map[string]string, error) {
	ns, err := c.client.Resource(namespacesGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading namespace %s: %w", name, err)
	}
	return ns.GetLabels(), nil
}

func labelSelector(obj *unstructured.Unstructured) (string, error) {
	raw, found, err := unstructured.NestedMap(obj.Object, "spec", "selector")
	if err != nil || !found {
		return "", fmt.Errorf("reading spec.selector of %s %s/%s: not a label selector", obj.GetKind(), obj.GetNamespace(), obj.GetName())
	}
	var sel metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &sel); err != nil {
		return "", fmt.Errorf("reading spec.selector of %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	s, err := metav1.LabelSelectorAsSelector(&sel)
	if err != nil {
		return "", fmt.Errorf("reading spec.selector of %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return s.String(), nil
}
