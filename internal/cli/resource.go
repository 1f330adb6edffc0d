package cli

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource resolves a kind as kubectl's users write it ("statefulset",
// "sts", "deployments.apps") to a resource, and says whether it is
// namespaced.
func Resource(mapper meta.RESTMapper, kind string) (schema.GroupVersionResource, bool, error) {
	gvr, err := mapper.ResourceFor(schema.ParseGroupResource(strings.ToLower(kind)).WithVersion(""))
	if meta.IsNoMatchError(err) {
		return gvr, false, BadInput(fmt.Errorf("unknown kind %q: %w", kind, err))
	}
	if err != nil {
		return gvr, false, fmt.Errorf("resolving kind %q: %w", kind, err)
	}
	gvk, err := mapper.KindFor(gvr)
	if err != nil {
		return gvr, false, fmt.Errorf("resolving %q: %w", kind, err)
	}
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return gvr, false, fmt.Errorf("resolving %q: %w", kind, err)
	}
	return gvr, Namespaced(mapping), nil
}

// Namespaced reports whether the resource of mapping is namespaced.
func Namespaced(mapping *meta.RESTMapping) bool {
	return mapping.Scope.Name() == meta.RESTScopeNameNamespace
}

// WithKinds returns resources plus the resources of kinds (the values of
// --kind, as kubectl's users write them) that it does not have yet, in
// their order.
func WithKinds(mapper meta.RESTMapper, resources []schema.GroupVersionResource, kinds []string) ([]schema.GroupVersionResource, error) {
	for _, k := range kinds {
		gvr, _, err := Resource(mapper, strings.TrimSpace(k))
		if err != nil {
			return nil, err
		}
		if !containsResource(resources, gvr) {
			resources = append(resources, gvr)
		}
	}
	return resources, nil
}

// containsResource reports whether list has gvr's group and resource, in
// any version.
func containsResource(list []schema.GroupVersionResource, gvr schema.GroupVersionResource) bool {
	for _, r := range list {
		if r.GroupResource() == gvr.GroupResource() {
			return true
		}
	}
	return false
}
