package kube_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// Revisions lists what the object's controller makes of its pod template:
// a Deployment's ReplicaSets, a StatefulSet's or DaemonSet's
// ControllerRevisions, and for any other kind both (an Argo Rollout's
// revisions are ReplicaSets), keeping only those whose controller
// reference is the object.
func TestRevisionsByKind(t *testing.T) {
	tests := map[string]struct {
		apiVersion, kind string
		want             []string
	}{
		"a Deployment's ReplicaSets":          {"apps/v1", "Deployment", []string{"web-rs"}},
		"a StatefulSet's ControllerRevisions": {"apps/v1", "StatefulSet", []string{"web-cr"}},
		"a DaemonSet's ControllerRevisions":   {"apps/v1", "DaemonSet", []string{"web-cr"}},
		// Argo Rollouts makes ReplicaSets only; a ControllerRevision that a
		// custom resource controls is its revision too.
		"an Argo Rollout's ReplicaSets and ControllerRevisions": {"argoproj.io/v1alpha1", "Rollout", []string{"web-rs", "web-cr"}},
		// The group decides, not the kind's name: an OpenKruise
		// StatefulSet, a custom Deployment.
		"an apps.kruise.io StatefulSet's ReplicaSets and ControllerRevisions": {"apps.kruise.io/v1beta1", "StatefulSet", []string{"web-rs", "web-cr"}},
		"an example.com Deployment's ReplicaSets and ControllerRevisions":     {"example.com/v1", "Deployment", []string{"web-rs", "web-cr"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := object(tc.apiVersion, tc.kind, "shop", "web", map[string]any{
				"spec": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}},
			})
			obj.SetUID("uid-web")
			controller := true
			controlled := func(kind, name string) *unstructured.Unstructured {
				r := object("apps/v1", kind, "shop", name, map[string]any{})
				r.SetLabels(map[string]string{"app": "web"})
				r.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: tc.apiVersion, Kind: tc.kind, Name: "web", UID: "uid-web", Controller: &controller}})
				return r
			}
			rs, cr := controlled("ReplicaSet", "web-rs"), controlled("ControllerRevision", "web-cr")
			orphan := object("apps/v1", "ReplicaSet", "shop", "web-orphan", map[string]any{})
			orphan.SetLabels(map[string]string{"app": "web"})
			client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
				{Group: "apps", Version: "v1", Resource: "replicasets"}:         "ReplicaSetList",
				{Group: "apps", Version: "v1", Resource: "controllerrevisions"}: "ControllerRevisionList",
			}, obj, rs, cr, orphan)
			revisions, err := kube.NewCluster(client, 0).Revisions(t.Context(), obj)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range revisions {
				got = append(got, r.GetName())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Revisions() (-want +got):\n%s", diff)
			}
		})
	}
}
