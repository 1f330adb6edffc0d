package kube

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

var (
	namespacesGVR          = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	replicaSetsGVR         = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	controllerRevisionsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}
)

// Cluster reads what the reviews need beyond the object under review from
// the API server, with a dynamic client: an object (the parent of a /scale
// request), the revisions of a workload, the labels of a namespace. Every
// read is a direct API call made only when asked: it keeps no informers and
// no cluster-wide caches, only namespace labels for a short time (they are
// read on every request and change rarely); HorizontalPodAutoscalers come
// from an Autoscalers cache when given one (WithAutoscalers). It is safe
// for concurrent use.
type Cluster struct {
	client      dynamic.Interface
	ttl         time.Duration
	mu          sync.Mutex
	labels      map[string]cachedLabels
	maxCache    int
	autoscalers *Autoscalers
	// verdicts are the removal proofs kept (removal.go), under mu.
	verdicts map[string]cachedVerdict
	// observeRemoval is told the outcome of each removal proof.
	observeRemoval func(outcome string)
}

// ClusterOption configures a Cluster.
type ClusterOption func(*Cluster)

// WithAutoscalers makes Cluster.Autoscalers read the cache a: the
// server's way, one watch instead of a list per review.
func WithAutoscalers(a *Autoscalers) ClusterOption {
	return func(c *Cluster) { c.autoscalers = a }
}

// WithRemovalObserver makes RemovalSticks tell observe the outcome of
// each proof: a RemovalVerdict, "cached" for one answered from the cache,
// or "error" for one that could not be made (the server's metric).
func WithRemovalObserver(observe func(outcome string)) ClusterOption {
	return func(c *Cluster) { c.observeRemoval = observe }
}

type cachedLabels struct {
	labels  map[string]string
	fetched time.Time
}

// NewCluster returns a Cluster on client that keeps namespace labels for
// ttl (0 disables the cache).
func NewCluster(client dynamic.Interface, ttl time.Duration, opts ...ClusterOption) *Cluster {
	c := &Cluster{client: client, ttl: ttl, labels: map[string]cachedLabels{}, maxCache: 4096, verdicts: map[string]cachedVerdict{}, observeRemoval: func(string) {}}
	for _, opt := range opts {
		opt(c)
	}
	return c
}

// Object returns the object gvr/namespace/name.
func (c *Cluster) Object(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	obj, err := c.client.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading %s %s/%s: %w", gvr.Resource, namespace, name, err)
	}
	return obj, nil
}

// Revisions returns the ReplicaSets (Deployment) or ControllerRevisions
// (StatefulSet, DaemonSet) that obj controls, and both for any other kind
// (an Argo Rollout's revisions are ReplicaSets; a custom kind's controller
// may keep either): it lists by the object's own selector and keeps what
// the object controls. An object whose
// spec.selector is no label selector (a custom resource with a pod
// template of its own and no selector, or one of another shape) has none:
// nothing it controls can be found by it, so no write of its template is
// proven a rollback.
func (c *Cluster) Revisions(ctx context.Context, obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	selector, ok := labelSelector(obj)
	if !ok {
		return nil, nil
	}
	var owned []*unstructured.Unstructured
	for _, gvr := range revisionResources(obj.GroupVersionKind().GroupKind()) {
		list, err := c.client.Resource(gvr).Namespace(obj.GetNamespace()).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return nil, fmt.Errorf("listing %s of %s %s/%s: %w", gvr.Resource, obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
		for i := range list.Items {
			if controlledBy(&list.Items[i], obj) {
				owned = append(owned, &list.Items[i])
			}
		}
	}
	return owned, nil
}

// revisionResources are the resources that hold the revisions of an
// object of kind: the apps workloads' own, and both for any other kind
// (a custom kind named like one, an OpenKruise StatefulSet, may keep
// either).
func revisionResources(kind schema.GroupKind) []schema.GroupVersionResource {
	switch kind {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}:
		return []schema.GroupVersionResource{replicaSetsGVR}
	case schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, schema.GroupKind{Group: "apps", Kind: "DaemonSet"}:
		return []schema.GroupVersionResource{controllerRevisionsGVR}
	}
	return []schema.GroupVersionResource{replicaSetsGVR, controllerRevisionsGVR}
}

// NamespaceLabels returns the labels of a namespace; nil for "" (a
// cluster-scoped object).
func (c *Cluster) NamespaceLabels(ctx context.Context, name string) (map[string]string, error) {
	if name == "" {
		return nil, nil
	}
	now := time.Now()
	c.mu.Lock()
	cached, ok := c.labels[name]
	c.mu.Unlock()
	if ok && now.Sub(cached.fetched) < c.ttl {
		return cached.labels, nil
	}
	ns, err := c.client.Resource(namespacesGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading namespace %s: %w", name, err)
	}
	labels := ns.GetLabels()
	if c.ttl > 0 {
		c.mu.Lock()
		if len(c.labels) >= c.maxCache {
			clear(c.labels)
		}
		c.labels[name] = cachedLabels{labels: labels, fetched: now}
		c.mu.Unlock()
	}
	return labels, nil
}

// labelSelector returns obj's spec.selector as a label selector's string;
// false when spec.selector is missing or no label selector.
func labelSelector(obj *unstructured.Unstructured) (string, bool) {
	raw, found, err := unstructured.NestedMap(obj.Object, "spec", "selector")
	if err != nil || !found {
		return "", false
	}
	var sel metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &sel); err != nil {
		return "", false
	}
	s, err := metav1.LabelSelectorAsSelector(&sel)
	if err != nil {
		return "", false
	}
	return s.String(), true
}

func controlledBy(obj, owner *unstructured.Unstructured) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.UID == owner.GetUID()
}
