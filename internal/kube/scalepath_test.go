package kube_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
)

// crd is CustomResourceDefinition <plural>.example.com with one version
// per entry of scales: the version's scale subresource (nil: none).
func crd(plural string, scales map[string]map[string]any) *unstructured.Unstructured {
	var versions []any
	for name, scale := range scales {
		v := map[string]any{"name": name, "served": true, "storage": name == "v1"}
		if scale != nil {
			v["subresources"] = map[string]any{"scale": scale}
		}
		versions = append(versions, v)
	}
	return object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", plural+".example.com", map[string]any{
		"spec": map[string]any{"group": "example.com", "versions": versions},
	})
}

func scalePaths(specReplicasPath string) map[string]any {
	return map[string]any{"specReplicasPath": specReplicasPath, "statusReplicasPath": ".status.replicas"}
}

// The path of a custom resource's count is its CRD's specReplicasPath for
// the version asked for; it cannot be known without a readable CRD that
// declares a scale subresource for that version.
func TestScaleReplicasPath(t *testing.T) {
	client := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(),
		crd("queues", map[string]map[string]any{"v1": scalePaths(".spec.size"), "v1beta1": scalePaths(".spec.replicas")}),
		crd("pools", map[string]map[string]any{"v1": scalePaths(".spec.workers.count")}),
		crd("routes", map[string]map[string]any{"v1": nil}),
		crd("odd", map[string]map[string]any{"v1": scalePaths(".status.size"), "v2": scalePaths(".spec.items[0].size"), "v3": scalePaths(".spec..size")}),
	)
	cluster := kube.NewCluster(client, 0)
	tests := map[string]struct {
		resource, version string
		want              []string
		wantErr           string
	}{
		"a field of spec":                       {resource: "queues", version: "v1", want: []string{"spec", "size"}},
		"the path of the version asked for":     {resource: "queues", version: "v1beta1", want: []string{"spec", "replicas"}},
		"a nested field":                        {resource: "pools", version: "v1", want: []string{"spec", "workers", "count"}},
		"a version without a scale subresource": {resource: "routes", version: "v1", wantErr: "customresourcedefinition routes.example.com declares no scale subresource for version v1"},
		"a version the CRD does not have":       {resource: "queues", version: "v2", wantErr: "customresourcedefinition queues.example.com has no version v2"},
		"no CRD":                                {resource: "gadgets", version: "v1", wantErr: `reading customresourcedefinition gadgets.example.com: customresourcedefinitions.apiextensions.k8s.io "gadgets.example.com" not found`},
		"a path outside spec":                   {resource: "odd", version: "v1", wantErr: `specReplicasPath ".status.size" is not a JSON path under .spec without array notation`},
		"a path with array notation":            {resource: "odd", version: "v2", wantErr: `specReplicasPath ".spec.items[0].size" is not a JSON path under .spec without array notation`},
		"a path with an empty field name":       {resource: "odd", version: "v3", wantErr: `specReplicasPath ".spec..size" has an empty field name`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := cluster.ScaleReplicasPath(t.Context(), schema.GroupVersionResource{Group: "example.com", Version: tc.version, Resource: tc.resource})
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("path (-want +got):\n%s", diff)
			}
		})
	}
}

// ExampleCluster_ScaleReplicasPath finds where the /scale subresource of a
// custom resource keeps its count: the specReplicasPath of its CRD.
func ExampleCluster_ScaleReplicasPath() {
	queues := crd("queues", map[string]map[string]any{"v1": scalePaths(".spec.size")})
	cluster := kube.NewCluster(dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), queues), 0)
	path, err := cluster.ScaleReplicasPath(context.Background(), schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "queues"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(path)
	// Output:
	// [spec size]
}
