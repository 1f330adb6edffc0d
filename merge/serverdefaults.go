package merge

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// The values the API server's defaulting gives a field of a built-in kind
// when a write leaves it out. An orphan whose value is its field's default
// is not reported: removing it, as the warning's command would, makes the
// server put the same value back (now owned by whoever removed it), so
// the warning would come back after every fix. Ownership cannot tell
// those apart: a port added by `kubectl patch` and later adopted into the
// manifest leaves the defaulted targetPort and protocol owned by
// kubectl-patch alone.
//
// Written by hand because no importable library has these defaults: they
// live in the defaulting functions of k8s.io/kubernetes/pkg/apis/*/v1,
// and k8s.io/kubernetes is not meant to be imported as a module (its
// go.mod replaces every staging repository). The API server's OpenAPI
// documents carry only a few of them (+default markers). The table holds
// only defaults that are constants or follow from a sibling, at the
// Kubernetes version pinned in hack/ (TestServerDefaultsAreTheServers in
// test/e2e/merge checks them against its API server);
// a field missing from it is reported as before.

// A pod spec's service account and its deprecated alias.
const (
	serviceAccountName       = "serviceAccountName"
	deprecatedServiceAccount = "serviceAccount"
)

// podSpecDefaults are the defaults of a pod spec, by its path relative to
// the pod spec ("[]" stands for any list element).
var podSpecDefaults = map[string]any{
	"restartPolicy":                 "Always",
	"dnsPolicy":                     "ClusterFirst",
	"schedulerName":                 "default-scheduler",
	"terminationGracePeriodSeconds": int64(30),
	// An empty object the server adds to every pod spec.
	"securityContext": map[string]any{},
}

// containerDefaults are the defaults of a container (and an init
// container), relative to the container.
var containerDefaults = map[string]any{
	"terminationMessagePath":              "/dev/termination-log",
	"terminationMessagePolicy":            "File",
	"ports[].protocol":                    "TCP",
	"env[].valueFrom.fieldRef.apiVersion": "v1",
	// An empty object the server adds to every container.
	"resources": map[string]any{},
}

// probeDefaults are the defaults of a liveness, readiness or startup
// probe, relative to the probe.
var probeDefaults = map[string]any{
	"timeoutSeconds":   int64(1),
	"periodSeconds":    int64(10),
	"successThreshold": int64(1),
	"failureThreshold": int64(3),
	"httpGet.scheme":   "HTTP",
}

// volumeDefaults are the defaults of a pod volume, relative to the volume.
var volumeDefaults = map[string]any{
	"configMap.defaultMode":   int64(420),
	"secret.defaultMode":      int64(420),
	"projected.defaultMode":   int64(420),
	"downwardAPI.defaultMode": int64(420),
	// HostPathUnset: no check before the mount.
	"hostPath.type": "",
}

// jobSpecDefaults are the defaults of a Job spec, relative to the spec
// (a CronJob's job template has none of them: SetObjectDefaults_CronJob).
// backoffLimit and podReplacementPolicy follow from siblings
// (jobDefaultFollowsSibling).
var jobSpecDefaults = map[string]any{
	"backoffLimit":         int64(6),
	"completions":          int64(1),
	"parallelism":          int64(1),
	"completionMode":       "NonIndexed",
	"suspend":              false,
	"podReplacementPolicy": "TerminatingOrFailed",
	"manualSelector":       false,
}

// objectDefaults are the defaults of top-level fields, by kind.
var objectDefaults = map[string]map[string]any{
	"Service": {
		"spec.type":                  "ClusterIP",
		"spec.sessionAffinity":       "None",
		"spec.internalTrafficPolicy": "Cluster",
		"spec.ipFamilyPolicy":        "SingleStack",
		"spec.ports[].protocol":      "TCP",
	},
	"CronJob": {
		"spec.suspend":                    false,
		"spec.concurrencyPolicy":          "Allow",
		"spec.successfulJobsHistoryLimit": int64(3),
		"spec.failedJobsHistoryLimit":     int64(1),
	},
	"Deployment": {
		"spec.revisionHistoryLimit":                  int64(10),
		"spec.progressDeadlineSeconds":               int64(600),
		"spec.strategy.type":                         "RollingUpdate",
		"spec.strategy.rollingUpdate.maxSurge":       "25%",
		"spec.strategy.rollingUpdate.maxUnavailable": "25%",
	},
	"StatefulSet": {
		"spec.revisionHistoryLimit":                   int64(10),
		"spec.podManagementPolicy":                    "OrderedReady",
		"spec.updateStrategy.type":                    "RollingUpdate",
		"spec.updateStrategy.rollingUpdate.partition": int64(0),
		// The pinned API server defaults maxUnavailable
		// (MaxUnavailableStatefulSet); with that gate off it drops the
		// field altogether, so a live 1 is always its default.
		"spec.updateStrategy.rollingUpdate.maxUnavailable":      int64(1),
		"spec.persistentVolumeClaimRetentionPolicy.whenDeleted": "Retain",
		"spec.persistentVolumeClaimRetentionPolicy.whenScaled":  "Retain",
	},
	"DaemonSet": {
		"spec.revisionHistoryLimit":                        int64(10),
		"spec.updateStrategy.type":                         "RollingUpdate",
		"spec.updateStrategy.rollingUpdate.maxUnavailable": int64(1),
		"spec.updateStrategy.rollingUpdate.maxSurge":       int64(0),
	},
	"HorizontalPodAutoscaler": {
		"spec.minReplicas": int64(1),
	},
}

// clientIPAffinityDefault is the sessionAffinityConfig the server gives a
// Service with sessionAffinity ClientIP (3 hours).
var clientIPAffinityDefault = map[string]any{"clientIP": map[string]any{"timeoutSeconds": int64(10800)}}

// isServiceDiscriminatedDefault reports whether v at shape is a default
// the server gives a Service because of its type or session affinity
// (found by the removal proofs: they come with `kubectl patch` to
// NodePort or ClientIP, and removing them only brings them back):
// externalTrafficPolicy Cluster for NodePort and LoadBalancer,
// allocateLoadBalancerNodePorts true for LoadBalancer, and
// sessionAffinityConfig (or its parts) for ClientIP.
func isServiceDiscriminatedDefault(obj map[string]any, shape string, v any) bool {
	spec, _ := obj["spec"].(map[string]any)
	typ, _ := spec["type"].(string)
	affinity, _ := spec["sessionAffinity"].(string)
	switch shape {
	case "spec.externalTrafficPolicy":
		return (typ == "NodePort" || typ == "LoadBalancer") && v == "Cluster"
	case "spec.allocateLoadBalancerNodePorts":
		return typ == "LoadBalancer" && v == true
	case "spec.sessionAffinityConfig":
		return affinity == "ClientIP" && jsonEqual(v, clientIPAffinityDefault)
	case "spec.sessionAffinityConfig.clientIP":
		return affinity == "ClientIP" && jsonEqual(v, clientIPAffinityDefault["clientIP"])
	case "spec.sessionAffinityConfig.clientIP.timeoutSeconds":
		return affinity == "ClientIP" && jsonEqual(v, int64(10800))
	}
	return false
}

// serviceOfType reports whether obj, a Service, is of type typ.
func serviceOfType(obj map[string]any, typ string) bool {
	t, _, _ := unstructured.NestedString(obj, "spec", "type")
	return t == typ
}

// jobDefaultFollowsSibling reports whether the default of a Job's field
// at shape is another than jobSpecDefaults' because of a sibling
// (SetDefaults_Job): backoffLimit is MaxInt32 with backoffLimitPerIndex,
// podReplacementPolicy Failed with a podFailurePolicy.
func jobDefaultFollowsSibling(obj map[string]any, shape string) bool {
	sibling := map[string]string{"spec.backoffLimit": "backoffLimitPerIndex", "spec.podReplacementPolicy": "podFailurePolicy"}[shape]
	if sibling == "" {
		return false
	}
	_, has, _ := unstructured.NestedFieldNoCopy(obj, "spec", sibling)
	return has
}

// podSpecPrefixes are where a kind keeps its pod spec.
var podSpecPrefixes = map[string]string{
	"Pod":                   "spec.",
	"Deployment":            "spec.template.spec.",
	"StatefulSet":           "spec.template.spec.",
	"DaemonSet":             "spec.template.spec.",
	"ReplicaSet":            "spec.template.spec.",
	"ReplicationController": "spec.template.spec.",
	"Job":                   "spec.template.spec.",
	"CronJob":               "spec.jobTemplate.spec.template.spec.",
	"PodTemplate":           "template.spec.",
}

// isPodSpecField reports whether p is the field name of the pod spec of
// obj, a built-in kind (core, apps or batch) that has one.
func isPodSpecField(obj map[string]any, p Path, name string) bool {
	u := unstructured.Unstructured{Object: obj}
	switch u.GroupVersionKind().Group {
	case "", "apps", "batch":
	default:
		return false
	}
	prefix, ok := podSpecPrefixes[u.GetKind()]
	return ok && len(p) > 0 && shapeOf(p) == prefix+name
}

// heldThroughAlias reports whether p, a built-in pod spec's
// serviceAccountName, is held through its deprecated alias by a set of
// paths (has: a manifest's, last-applied's or an applied configuration's
// fields): a manifest that still writes serviceAccount sets the name too,
// so the name is no orphan.
func heldThroughAlias(obj map[string]any, p Path, has func(fieldpath.Path) bool) bool {
	if !isPodSpecField(obj, p, serviceAccountName) {
		return false
	}
	return has(fieldpath.Path(serviceAccountAlias(p)))
}

// mirroredFrom returns the field that the API server copies into p, a
// field of obj, on every write: the pod spec's serviceAccountName for its
// deprecated alias serviceAccount (the v1 conversion of PodSpec writes the
// name into the alias). A write that changes the source changes the
// mirror with it; the change is the source's. False for any other field.
func mirroredFrom(obj map[string]any, p Path) (Path, bool) {
	if !isPodSpecField(obj, p, deprecatedServiceAccount) {
		return nil, false
	}
	src := make(Path, 0, len(p))
	src = append(src, p[:len(p)-1]...)
	return append(src, fieldName(serviceAccountName)), true
}

// serviceAccountAlias is the deprecated serviceAccount beside p, a pod
// spec's serviceAccountName (a new path: p is left as it is).
func serviceAccountAlias(p Path) Path {
	alias := make(Path, 0, len(p))
	alias = append(alias, p[:len(p)-1]...)
	return append(alias, fieldName(deprecatedServiceAccount))
}

// isServerDefault reports whether v, the value of field p of a built-in
// kind in obj, is the value the API server would default p to if it were
// absent. Only built-in kinds (group of the scheme) have these defaults;
// the caller checks that.
func isServerDefault(kind string, obj map[string]any, p Path, v any) bool {
	shape := shapeOf(p)
	if kind == "Service" && serviceOfType(obj, "ExternalName") && (shape == "spec.internalTrafficPolicy" || shape == "spec.ipFamilyPolicy") {
		// An ExternalName Service has neither (SetDefaults_Service,
		// the registry's dropTypeDependentFields).
		return false
	}
	if kind == "Job" && jobDefaultFollowsSibling(obj, shape) {
		return false
	}
	if want, ok := objectDefaults[kind][shape]; ok && jsonEqual(v, want) {
		return true
	}
	if kind == "Service" && isServiceDiscriminatedDefault(obj, shape, v) {
		return true
	}
	if kind == "Service" && shape == "spec.ports[].targetPort" {
		// targetPort defaults to the port's own number.
		port := at(obj, append(p[:len(p)-1:len(p)-1], fieldName("port")))
		return port.ok && jsonEqual(v, port.v)
	}
	if kind == "Job" {
		if want, ok := jobSpecDefaults[strings.TrimPrefix(shape, "spec.")]; ok && strings.HasPrefix(shape, "spec.") && jsonEqual(v, want) {
			return true
		}
	}
	// A CronJob's job template gets no Job defaults (SetObjectDefaults_CronJob
	// defaults only its pod spec): the Jobs made from it do.
	prefix, ok := podSpecPrefixes[kind]
	if !ok {
		return false
	}
	rel, ok := strings.CutPrefix(shape, prefix)
	if !ok {
		return false
	}
	return isPodSpecDefault(rel, obj, p, v)
}

// isPodSpecDefault is isServerDefault for a path rel relative to a pod
// spec; p is the whole path, for the siblings.
func isPodSpecDefault(rel string, obj map[string]any, p Path, v any) bool {
	if want, ok := podSpecDefaults[rel]; ok {
		return jsonEqual(v, want)
	}
	if rel == deprecatedServiceAccount && isPodSpecField(obj, p, deprecatedServiceAccount) {
		// The API server writes the deprecated alias as
		// serviceAccountName on every read (the v1 conversion of
		// PodSpec): it is serviceAccountName's, never an orphan of its
		// own (removePatch removes the two together).
		name := at(obj, append(p[:len(p)-1:len(p)-1], fieldName(serviceAccountName)))
		return name.ok && jsonEqual(v, name.v)
	}
	if r, ok := strings.CutPrefix(rel, "volumes[]."); ok {
		want, ok := volumeDefaults[r]
		return ok && jsonEqual(v, want)
	}
	var r string
	switch {
	case strings.HasPrefix(rel, "containers[]."):
		r = strings.TrimPrefix(rel, "containers[].")
	case strings.HasPrefix(rel, "initContainers[]."):
		r = strings.TrimPrefix(rel, "initContainers[].")
	default:
		return false
	}
	if want, ok := containerDefaults[r]; ok {
		return jsonEqual(v, want)
	}
	if r == "imagePullPolicy" {
		// Always for an image without a tag or tagged latest, else
		// IfNotPresent (a digest counts as a tag).
		image := at(obj, append(p[:len(p)-1:len(p)-1], fieldName("image")))
		s, _ := image.v.(string)
		return image.ok && v == defaultPullPolicy(s)
	}
	for _, probe := range []string{"livenessProbe.", "readinessProbe.", "startupProbe."} {
		if pr, ok := strings.CutPrefix(r, probe); ok {
			want, ok := probeDefaults[pr]
			return ok && jsonEqual(v, want)
		}
	}
	return false
}

// defaultPullPolicy is the pull policy the server gives a container of
// image when it has none.
func defaultPullPolicy(image string) string {
	if strings.Contains(image, "@") {
		return "IfNotPresent"
	}
	name := image[strings.LastIndex(image, "/")+1:]
	i := strings.LastIndex(name, ":")
	if i < 0 || name[i+1:] == "latest" {
		return "Always"
	}
	return "IfNotPresent"
}

// shapeOf is p with every list element written "[]": the field names
// only.
func shapeOf(p Path) string {
	var b strings.Builder
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(*pe.FieldName)
		default:
			b.WriteString("[]")
		}
	}
	return b.String()
}

// IsServerDefault reports whether the value at p in obj, an object of a
// built-in kind, is the value the API server gives p when a write leaves
// it out (see the table above). It is false for a kind outside the
// Analyzer's default scheme, for a field the table does not hold and for
// an absent field.
func IsServerDefault(obj map[string]any, p Path) bool {
	u := &unstructured.Unstructured{Object: obj}
	if !scheme.Scheme.Recognizes(u.GroupVersionKind()) {
		return false
	}
	v := at(obj, p)
	return v.ok && isServerDefault(u.GetKind(), obj, p, v.v)
}

// claimTemplateDefaults are what the API server adds to each of a
// StatefulSet's volumeClaimTemplates (SetDefaults_StatefulSet defaults
// them as PersistentVolumeClaims, status included).
var claimTemplateDefaults = []struct {
	path  []string
	value any
}{
	{[]string{"apiVersion"}, "v1"},
	{[]string{"kind"}, "PersistentVolumeClaim"},
	{[]string{"spec", "volumeMode"}, "Filesystem"},
	{[]string{"status", "phase"}, "Pending"},
}

// WithClaimTemplateDefaults returns obj, when it is an apps/v1
// StatefulSet, with the defaults the API server gives its
// volumeClaimTemplates: kubectl apply sends that list whole whenever live
// differs from the manifest, which it always does by these defaults, and
// the server defaults it again, so a result computed without them shows a
// change that the stored object never has. Other objects are returned as
// they are.
func WithClaimTemplateDefaults(obj *unstructured.Unstructured) *unstructured.Unstructured {
	if obj.GetAPIVersion() != "apps/v1" || obj.GetKind() != "StatefulSet" {
		return obj
	}
	templates, ok, _ := unstructured.NestedSlice(obj.Object, "spec", "volumeClaimTemplates")
	if !ok {
		return obj
	}
	out := obj.DeepCopy()
	for _, t := range templates {
		tm, ok := t.(map[string]any)
		if !ok {
			continue
		}
		for _, d := range claimTemplateDefaults {
			if _, has, _ := unstructured.NestedFieldNoCopy(tm, d.path...); !has {
				_ = unstructured.SetNestedField(tm, d.value, d.path...)
			}
		}
	}
	_ = unstructured.SetNestedSlice(out.Object, templates, "spec", "volumeClaimTemplates")
	return out
}

// WithReplicasDefault returns obj, when it is of a kind whose count the
// API server defaults (defaultsReplicas: an apps/v1 Deployment,
// StatefulSet or ReplicaSet, a ReplicationController) and has no
// spec.replicas, with the count 1 that the server gives it whatever else
// the object holds: kubectl apply of a manifest that drops
// replicas from last-applied deletes the field, and the stored object has
// 1 again. A result computed without it differs from live where the
// stored object may not: at 1 the write changes last-applied alone, which
// the webhooks review as kubectl apply edit-last-applied's hand-over.
func WithReplicasDefault(obj *unstructured.Unstructured) *unstructured.Unstructured {
	if !defaultsReplicas(obj.GetAPIVersion(), obj.GetKind()) {
		return obj
	}
	if _, has, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "replicas"); has {
		return obj
	}
	out := obj.DeepCopy()
	_ = unstructured.SetNestedField(out.Object, int64(1), "spec", "replicas")
	return out
}
