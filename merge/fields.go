package merge

import (
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// units turns a set of changed or extra paths into the paths to report: a
// list element is reported once, as a whole, when the element itself is in
// the set (added or removed); other fields are reported per leaf. The
// result is sorted and has no duplicates.
func units(s *fieldpath.Set) []Path {
	seen := map[string]bool{}
	var out []Path
	s.Leaves().Iterate(func(fp fieldpath.Path) {
		p := topElement(Path(fp), s.Has)
		if key := p.String(); !seen[key] {
			seen[key] = true
			out = append(out, p)
		}
	})
	// A removed or added element with no fields below it is a member but
	// may not be a leaf of the set: add those too.
	s.Iterate(func(fp fieldpath.Path) {
		p := Path(fp)
		if len(p) == 0 || p[len(p)-1].FieldName != nil {
			return
		}
		p = topElement(p, s.Has)
		if key := p.String(); !seen[key] {
			seen[key] = true
			out = append(out, p)
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Compare(out[j]) < 0 })
	return out
}

// topElement returns the shortest prefix of p that ends in a list element
// and for which in is true, or p itself. It always returns a copy: set
// iteration reuses the memory of the paths it hands out.
func topElement(p Path, in func(fieldpath.Path) bool) Path {
	for i := range p {
		if p[i].FieldName != nil {
			continue
		}
		prefix := p[:i+1]
		if in(fieldpath.Path(prefix)) {
			return prefix.Append()
		}
	}
	return p.Append()
}

// serverManaged reports whether the server or a controller, not a
// manifest, writes p: status, identity and bookkeeping metadata, and the
// annotations that apply and controllers maintain.
func serverManaged(p Path) bool {
	if len(p) == 0 || p[0].FieldName == nil {
		return false
	}
	switch *p[0].FieldName {
	case "status", "apiVersion", "kind":
		return true
	case "metadata":
	default:
		return false
	}
	if len(p) < 2 || p[1].FieldName == nil {
		return false
	}
	switch *p[1].FieldName {
	case "managedFields", "resourceVersion", "uid", "generation", "creationTimestamp",
		"deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "ownerReferences",
		"name", "namespace", "generateName":
		return true
	case "annotations":
		return len(p) > 2 && p[2].FieldName != nil && serverAnnotation(*p[2].FieldName)
	}
	return false
}

// DaemonSetGenerationAnnotation is the annotation in which the API server
// keeps a DaemonSet's template generation: it sets it on every write and
// bumps it on one that changes the pod template, in that write, after
// kubectl recorded the object it sent (the DaemonSet registry's
// PrepareForUpdate).
const DaemonSetGenerationAnnotation = "deprecated.daemonset.template.generation"

// serverAnnotation reports whether the annotation key is bookkeeping of
// the server, kubectl or apply-hygiene (HandedOverAnnotation), which no
// manifest sets: never an orphan, a drift or an imperative change.
func serverAnnotation(key string) bool {
	switch key {
	case LastAppliedAnnotation, HandedOverAnnotation, "deployment.kubernetes.io/revision",
		DaemonSetGenerationAnnotation:
		return true
	}
	return false
}

// workloadState reports whether the field at path key (kubectl notation)
// is the state of a workload that a command sets, rather than
// configuration that a write left behind, so that it is never an orphan
// (never reported, never pruned):
//   - spec.replicas: leaving replicas out of the manifest is the
//     documented way to hand it to `kubectl scale` or an autoscaler;
//   - spec.paused: `kubectl rollout pause` sets it, and pause, apply,
//     `kubectl rollout resume` is the documented way to batch changes of a
//     Deployment. Removing it (the orphan's command, or prune) would
//     resume the rollout half-way. Custom resources that have the field
//     (Argo Rollouts, Cluster API) mean the same by it;
//   - spec.updateStrategy.rollingUpdate.partition: a StatefulSet's staged
//     (canary) rollout, set by `kubectl patch` and lowered step by step.
//     Removing it would roll the rest of the pods mid-canary;
//   - spec.suspend: a CronJob or Job suspended by `kubectl patch -p
//     '{"spec":{"suspend":true}}'`, the usual action in an incident.
//     Removing it would start the CronJob's schedule again (Flux's
//     `flux suspend` means the same on its custom resources).
//
// A manifest that has one of these fields owns it as any other: apply
// removes it when the manifest drops it.
func workloadState(key string) bool {
	return slices.Contains(workloadStateKeys, key)
}

var workloadStateKeys = []string{"spec.replicas", "spec.paused", "spec.updateStrategy.rollingUpdate.partition", "spec.suspend"}

// holdsScaledCount reports whether one of ows, the owners of a field (or
// of a field inside it), wrote through the /scale subresource: the field
// is the count that /scale sets, the workload's state as spec.replicas is
// (workloadState), wherever the kind keeps it. A custom resource's CRD
// names the field (specReplicasPath: .spec.size), which merge does not
// read; the API server records a /scale write at that field of the parent,
// with subresource scale (kubectl scale under the user agent's manager
// kubectl, an autoscaler under its own).
func holdsScaledCount(ows []Owner) bool {
	return slices.ContainsFunc(ows, func(o Owner) bool { return o.Subresource == "scale" })
}

// holdsWorkloadState reports whether obj has, strictly below p, a field
// that is the workload's state (workloadState).
func holdsWorkloadState(p Path, obj map[string]any) bool {
	prefix := p.String() + "."
	for _, key := range workloadStateKeys {
		if !strings.HasPrefix(key, prefix) {
			continue
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(obj, strings.Split(key, ".")...); found {
			return true
		}
	}
	return false
}
