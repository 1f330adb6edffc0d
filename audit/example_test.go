package audit_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Example scans a cluster (here a fake one) holding a Deployment that
// `kubectl create` made: it has no last-applied.
func Example() {
	ctx := context.Background()
	web := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "shop", "uid": "1",
			"managedFields": []any{map[string]any{"manager": "kubectl-create", "operation": "Update", "apiVersion": "apps/v1"}},
		},
		"spec": map[string]any{"replicas": int64(1)},
	}}
	lists := map[schema.GroupVersionResource]string{}
	for _, gvr := range audit.DefaultResources() {
		lists[gvr] = "List"
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, web)

	engine, err := policy.New(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	scanner := audit.NewScanner(client, merge.NewAnalyzer(), engine, audit.WithPageSize(100))
	report, err := scanner.Scan(ctx, audit.Target{Namespace: "shop"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range report.Findings {
		fmt.Println(f.Rule, f.Action, f.Object.Kind, f.Object.Name)
	}
	fmt.Println("deny:", report.Denied())
	// Output:
	// missing-last-applied warn Deployment web
	// deny: false
}
