package main

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// auditResources parses --audit-resources: group/version/resource, or
// version/resource for the core group (v1/configmaps). Empty: nil, which
// the audit reads as audit.DefaultResources.
func auditResources(specs []string) ([]schema.GroupVersionResource, error) {
	var out []schema.GroupVersionResource
	for _, s := range specs {
		parts := strings.Split(s, "/")
		var gvr schema.GroupVersionResource
		switch len(parts) {
		case 2:
			gvr = schema.GroupVersionResource{Version: parts[0], Resource: parts[1]}
		case 3:
			gvr = schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}
		default:
			return nil, fmt.Errorf("--audit-resources: %q is not group/version/resource (or version/resource for the core group)", s)
		}
		for _, p := range parts {
			if p == "" {
				return nil, fmt.Errorf("--audit-resources: %q has an empty part", s)
			}
		}
		out = append(out, gvr)
	}
	return out, nil
}
