package kube_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
)

// A custom resource whose spec.selector is no label selector (none, or of
// another shape) has no revisions, and reading them is no error: an error
// fails the review, which failurePolicy Fail turns into a denial of a write
// of its template without a field manager.
func TestRevisionsOfAnObjectWithoutALabelSelector(t *testing.T) {
	tests := map[string]map[string]any{
		"no selector":                 {"template": map[string]any{"a": int64(1)}},
		"a selector that is a string": {"selector": "app=web", "template": map[string]any{"a": int64(1)}},
		"matchLabels that is a list":  {"selector": map[string]any{"matchLabels": []any{"app"}}},
		"an invalid operator": {"selector": map[string]any{"matchExpressions": []any{
			map[string]any{"key": "app", "operator": "Near", "values": []any{"web"}},
		}}},
	}
	for name, spec := range tests {
		t.Run(name, func(t *testing.T) {
			obj := object("example.com/v1", "Blob", "shop", "web", map[string]any{"spec": spec})
			client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
				{Group: "apps", Version: "v1", Resource: "controllerrevisions"}: "ControllerRevisionList",
			}, obj)
			revisions, err := kube.NewCluster(client, 0).Revisions(t.Context(), obj)
			if err != nil || revisions != nil {
				t.Errorf("Revisions() = %v, %v; want none and no error", revisions, err)
			}
		})
	}
}
