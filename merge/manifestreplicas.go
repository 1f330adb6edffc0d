package merge

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// ManifestReplicas returns spec.replicas as the manifest of an apply sets
// it, and whether it sets it. new is the object after the apply, as
// admission sees it. For a client-side apply the manifest is new's
// last-applied annotation, which kubectl rewrites from the manifest on
// every apply; for a server-side apply (serverSide) it is the
// configuration that manager applied: new's value when manager's Apply
// entry of the main resource in new's managedFields owns spec.replicas. A
// missing or unusable last-applied, or no Apply entry of manager, sets
// nothing. Only unreadable managedFields are an error.
func ManifestReplicas(new *unstructured.Unstructured, manager string, serverSide bool) (any, bool, error) {
	replicas := Path{fieldName("spec"), fieldName("replicas")}
	if !serverSide {
		manifest, err := ParseLastApplied(new)
		if err != nil {
			return nil, false, nil //nolint:nilerr // no usable manifest: it sets nothing (invalid-last-applied says why)
		}
		v := at(manifest.Object, replicas)
		return v.v, v.ok && v.v != nil, nil
	}
	mfs, err := DecodeManagedFields(new)
	if err != nil {
		return nil, false, fmt.Errorf("reading the configuration %s applied: %w", manager, err)
	}
	applied := appliedFields(mfs, manager)
	if applied == nil || !applied.Has(fieldpath.Path(replicas)) {
		return nil, false, nil
	}
	v := at(new.Object, replicas)
	return v.v, v.ok && v.v != nil, nil
}
