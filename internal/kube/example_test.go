package kube_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
)

func object(apiVersion, kind, namespace, name string, fields map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: fields}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	obj.SetNamespace(namespace)
	obj.SetName(name)
	return obj
}

// ExampleCluster reads the ReplicaSets that a Deployment controls, found
// by its selector and its controller reference, and its namespace's labels.
func ExampleCluster() {
	web := object("apps/v1", "Deployment", "shop", "web", map[string]any{
		"spec": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}},
	})
	web.SetUID("uid-web")
	controller := true
	owned := object("apps/v1", "ReplicaSet", "shop", "web-1", map[string]any{})
	owned.SetLabels(map[string]string{"app": "web"})
	owned.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "uid-web", Controller: &controller}})
	other := object("apps/v1", "ReplicaSet", "shop", "web-orphan", map[string]any{})
	other.SetLabels(map[string]string{"app": "web"})
	ns := object("v1", "Namespace", "", "shop", map[string]any{})
	ns.SetLabels(map[string]string{"env": "prod"})

	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		{Group: "apps", Version: "v1", Resource: "replicasets"}: "ReplicaSetList",
	}, web, owned, other, ns)
	cluster := kube.NewCluster(client, 0)
	ctx := context.Background()
	revisions, err := cluster.Revisions(ctx, web)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range revisions {
		fmt.Println("revision:", r.GetName())
	}
	labels, err := cluster.NamespaceLabels(ctx, "shop")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("namespace labels:", labels)
	if _, err := cluster.Object(ctx, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "shop", "gone"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// revision: web-1
	// namespace labels: map[env:prod]
	// reading deployments shop/gone: deployments.apps "gone" not found
}
