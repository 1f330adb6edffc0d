package merge

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// An object reaches apply-hygiene in one version of its kind: the one the
// webhook is registered for (the API server converts the request under
// matchPolicy Equivalent), or the one the audit lists. A manifest and the
// managedFields entries name their fields in the version they were written
// in, and kubectl computes its three-way patch in the manifest's version.
// Across versions a field may have another name or shape: an autoscaling/v1
// HPA's targetCPUUtilizationPercentage is autoscaling/v2's spec.metrics,
// Ingress's backend serviceName/servicePort in networking.k8s.io/v1beta1 is
// service.name/service.port.number in v1, and a CRD's conversion may rename
// anything. merge cannot convert (a CRD's conversion is a webhook), so an
// analysis that would compare a manifest or an entry with the object path
// by path across versions reports nothing: a guess would make the field
// that the manifest sets an orphan to prune, or an edit back to the applied
// value an imperative edit to deny.

// sameVersion reports whether manifest, a manifest of obj's kind (a
// last-applied), names its fields as obj does: it has obj's apiVersion, or
// it is of the extensions group that obj's kind moved from with its fields
// (movedKinds but Ingress). Another version of the same group does not:
// autoscaling/v1 and autoscaling/v2 are one group.
func sameVersion(manifest, obj *unstructured.Unstructured) bool {
	if manifest.GetAPIVersion() == obj.GetAPIVersion() {
		return true
	}
	kind := obj.GetKind()
	return kind != "Ingress" && manifest.GetAPIVersion() == "extensions/v1beta1" && movedKinds[kind] == obj.GroupVersionKind().Group
}

// unplacedOwner reports whether an entry of mfs that is not a person's (an
// applier's or a controller's, on the main resource) is of another version
// than obj and owns a field that obj does not have: a field in that
// version's terms (autoscaling/v1's targetCPUUtilizationPercentage) that
// obj holds under another name (autoscaling/v2's spec.metrics). Which of
// obj's fields the entry owns is then unknown, so none is proved to be
// people's alone (an orphan). An entry whose every field obj has names
// them as obj does, and one without an apiVersion (which the API server
// never writes) counts as obj's version.
func unplacedOwner(mfs []ManagedFields, ow ownership, obj map[string]any) bool {
	apiVersion, _ := obj["apiVersion"].(string)
	for _, mf := range mfs {
		if mf.APIVersion == "" || mf.APIVersion == apiVersion || mf.Subresource != "" || mf.Fields == nil || ow.isPerson(mf.Owner) {
			continue
		}
		placed := true
		mf.Fields.Leaves().Iterate(func(fp fieldpath.Path) {
			placed = placed && at(obj, Path(fp)).ok
		})
		if !placed {
			return true
		}
	}
	return false
}
