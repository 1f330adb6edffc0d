package kube_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
)

// ExampleListAutoscalers finds the HorizontalPodAutoscaler of Deployment
// shop/web among the namespace's: the one whose scaleTargetRef names it.
func ExampleListAutoscalers() {
	hpa := func(name, target string) runtime.Object {
		return object("autoscaling/v2", "HorizontalPodAutoscaler", "shop", name, map[string]any{
			"spec": map[string]any{"maxReplicas": int64(10),
				"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": target}},
		})
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}: "HorizontalPodAutoscalerList"},
		hpa("web", "web"), hpa("api", "api"))
	web := object("apps/v1", "Deployment", "shop", "web", map[string]any{})
	hpas, err := kube.ListAutoscalers(context.Background(), client, web)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range hpas {
		fmt.Println(h.Name, h.Spec.MaxReplicas)
	}
	// Output:
	// web 10
}
