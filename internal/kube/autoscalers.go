package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	autoscalinginformers "k8s.io/client-go/informers/autoscaling/v2"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

var hpaGVR = schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}

// ErrAutoscalersNotSynced is returned by Autoscalers.Targeting until the
// cache has listed every HorizontalPodAutoscaler once.
var ErrAutoscalersNotSynced = errors.New("the HorizontalPodAutoscaler cache has not synced yet")

// targetIndex indexes HorizontalPodAutoscalers by the object their
// spec.scaleTargetRef names (targetKey).
const targetIndex = "scaleTarget"

// Autoscalers keeps the HorizontalPodAutoscalers (autoscaling/v2) of the
// whole cluster in an informer cache (one list, then a watch: RBAC list
// and watch on horizontalpodautoscalers), indexed by the object each one
// scales, so that a review finds the autoscalers of the object it reviews
// without an API call. It is a manager.Runnable that every replica runs
// (no leader election). It is safe for concurrent use.
type Autoscalers struct {
	informer cache.SharedIndexInformer
}

// NewAutoscalers returns the cache of client's HorizontalPodAutoscalers;
// Start fills it and keeps it current.
func NewAutoscalers(client kubernetes.Interface) (*Autoscalers, error) {
	inf := autoscalinginformers.NewHorizontalPodAutoscalerInformer(client, metav1.NamespaceAll, 0,
		cache.Indexers{targetIndex: indexByTarget})
	// The reviews read the target, the bounds and the counts: managedFields
	// are most of an HPA's size and never read.
	if err := inf.SetTransform(func(obj any) (any, error) {
		if m, ok := obj.(metav1.Object); ok {
			m.SetManagedFields(nil)
		}
		return obj, nil
	}); err != nil {
		return nil, fmt.Errorf("configuring the HorizontalPodAutoscaler cache: %w", err)
	}
	return &Autoscalers{informer: inf}, nil
}

// Start runs the informer until ctx ends.
func (a *Autoscalers) Start(ctx context.Context) error {
	a.informer.RunWithContext(ctx)
	return nil
}

// NeedLeaderElection is false: every replica reviews, so every replica
// keeps the cache.
func (a *Autoscalers) NeedLeaderElection() bool { return false }

// Targeting returns the HorizontalPodAutoscalers that scale obj, sorted
// by name; ErrAutoscalersNotSynced before the first list completed.
func (a *Autoscalers) Targeting(obj *unstructured.Unstructured) ([]*autoscalingv2.HorizontalPodAutoscaler, error) {
	if !a.informer.HasSynced() {
		return nil, ErrAutoscalersNotSynced
	}
	items, err := a.informer.GetIndexer().ByIndex(targetIndex, objectKey(obj))
	if err != nil {
		return nil, fmt.Errorf("looking up the HorizontalPodAutoscalers of %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	out := make([]*autoscalingv2.HorizontalPodAutoscaler, 0, len(items))
	for _, item := range items {
		if hpa, ok := item.(*autoscalingv2.HorizontalPodAutoscaler); ok && Targets(hpa, obj) {
			out = append(out, hpa)
		}
	}
	sortByName(out)
	return out, nil
}

func indexByTarget(obj any) ([]string, error) {
	hpa, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	if !ok {
		return nil, nil
	}
	return []string{targetKey(hpa)}, nil
}

// Targets reports whether hpa scales obj: same namespace, and its
// spec.scaleTargetRef names obj's API group (any version), kind and name.
func Targets(hpa *autoscalingv2.HorizontalPodAutoscaler, obj *unstructured.Unstructured) bool {
	return targetKey(hpa) == objectKey(obj)
}

func targetKey(hpa *autoscalingv2.HorizontalPodAutoscaler) string {
	ref := hpa.Spec.ScaleTargetRef
	return key(hpa.Namespace, ref.APIVersion, ref.Kind, ref.Name)
}

func objectKey(obj *unstructured.Unstructured) string {
	return key(obj.GetNamespace(), obj.GetAPIVersion(), obj.GetKind(), obj.GetName())
}

// key joins namespace, the group of apiVersion, kind and name; an
// apiVersion that does not parse keeps its text, so it matches only
// itself.
func key(namespace, apiVersion, kind, name string) string {
	group := apiVersion
	if gv, err := schema.ParseGroupVersion(apiVersion); err == nil {
		group = gv.Group
	}
	return strings.Join([]string{namespace, group, kind, name}, "/")
}

func sortByName(hpas []*autoscalingv2.HorizontalPodAutoscaler) {
	slices.SortFunc(hpas, func(a, b *autoscalingv2.HorizontalPodAutoscaler) int { return strings.Compare(a.Name, b.Name) })
}

// Autoscalers returns the HorizontalPodAutoscalers that scale obj (see
// Targets), sorted by name, from the cache of WithAutoscalers (an error
// wrapping ErrAutoscalersNotSynced until it has synced). Without a cache
// it knows none and makes no call: a review must not cost a list
// (ListAutoscalers is the one-off lookup).
func (c *Cluster) Autoscalers(_ context.Context, obj *unstructured.Unstructured) ([]*autoscalingv2.HorizontalPodAutoscaler, error) {
	if c.autoscalers == nil {
		return nil, nil
	}
	return c.autoscalers.Targeting(obj)
}

// ListAutoscalers lists the HorizontalPodAutoscalers of obj's namespace
// with client and returns those that scale obj, sorted by name: the
// one-off lookup of a command (kubectl hygiene diff), one list call.
func ListAutoscalers(ctx context.Context, client dynamic.Interface, obj *unstructured.Unstructured) ([]*autoscalingv2.HorizontalPodAutoscaler, error) {
	list, err := client.Resource(hpaGVR).Namespace(obj.GetNamespace()).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the HorizontalPodAutoscalers of namespace %s: %w", obj.GetNamespace(), err)
	}
	var out []*autoscalingv2.HorizontalPodAutoscaler
	for i := range list.Items {
		hpa := &autoscalingv2.HorizontalPodAutoscaler{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, hpa); err != nil {
			return nil, fmt.Errorf("decoding HorizontalPodAutoscaler %s/%s: %w", list.Items[i].GetNamespace(), list.Items[i].GetName(), err)
		}
		if Targets(hpa, obj) {
			out = append(out, hpa)
		}
	}
	sortByName(out)
	return out, nil
}
