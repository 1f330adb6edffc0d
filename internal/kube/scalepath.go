package kube

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var customResourceDefinitionsGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// ScaleReplicasPath returns the path of the field that the /scale
// subresource of the custom resource gvr sets: its CRD's
// spec.versions[].subresources.scale.specReplicasPath for gvr's version
// (".spec.size" is [spec size]). It reads the CRD, named
// <resource>.<group>, on every call (a changed CRD counts at once). The
// error says why the path cannot be known: the CRD cannot be read (an
// aggregated API has none; RBAC may not allow it), or it declares no
// scale subresource for the version.
func (c *Cluster) ScaleReplicasPath(ctx context.Context, gvr schema.GroupVersionResource) ([]string, error) {
	name := gvr.Resource + "." + gvr.Group
	crd, err := c.client.Resource(customResourceDefinitionsGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading customresourcedefinition %s: %w", name, err)
	}
	return SpecReplicasPath(crd, gvr.Version)
}

// SpecReplicasPath returns the specReplicasPath that the CustomResourceDefinition crd
// (apiextensions.k8s.io/v1) declares for its version, as a field path
// (".spec.workers.count" is [spec workers count]). The API server allows
// only a JSON path under .spec without array notation there; anything else
// is an error.
func SpecReplicasPath(crd *unstructured.Unstructured, version string) ([]string, error) {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		v, _ := v.(map[string]any)
		if name, _ := v["name"].(string); name != version {
			continue
		}
		path, found, err := unstructured.NestedString(v, "subresources", "scale", "specReplicasPath")
		if err != nil || !found {
			return nil, fmt.Errorf("customresourcedefinition %s declares no scale subresource for version %s", crd.GetName(), version)
		}
		return fieldPath(path)
	}
	return nil, fmt.Errorf("customresourcedefinition %s has no version %s", crd.GetName(), version)
}

// fieldPath splits a specReplicasPath: a JSON path under .spec without
// array notation.
func fieldPath(jsonPath string) ([]string, error) {
	fields := strings.Split(strings.TrimPrefix(jsonPath, "."), ".")
	if !strings.HasPrefix(jsonPath, ".spec.") || strings.ContainsAny(jsonPath, "[]") {
		return nil, fmt.Errorf("specReplicasPath %q is not a JSON path under .spec without array notation", jsonPath)
	}
	for _, f := range fields {
		if f == "" {
			return nil, fmt.Errorf("specReplicasPath %q has an empty field name", jsonPath)
		}
	}
	return fields, nil
}
