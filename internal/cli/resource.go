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
	return gvr, mapping.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// ContainsResource reports whether list has gvr's group and resource, in
// any version.
func ContainsResource(list []schema.GroupVersionResource, gvr schema.GroupVersionResource) bool {
	for _, r := range list {
		if r.GroupResource() == gvr.GroupResource() {
			return true
		}
	}
	return false
}
