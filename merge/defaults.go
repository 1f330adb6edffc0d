package merge

import (
	"strings"
)

// The functions below return the values that the API server fills in when a
// manifest leaves a field out, for apps/v1 workloads and pod templates (from
// k8s.io/kubernetes pkg/apis/apps/v1/defaults.go and pkg/apis/core/v1/
// defaults.go, which this module does not import). Keys are path patterns:
// the path with every list element written [*]. A live field equal to its
// default is never reported as orphaned: nobody set it. NewAnalyzer builds
// the table once; it is only read afterwards.

func kindDefaults() map[string]map[string][]any {
	return map[string]map[string][]any{
		"Deployment": {
			"spec.replicas":                              {1},
			"spec.revisionHistoryLimit":                  {10},
			"spec.progressDeadlineSeconds":               {600},
			"spec.strategy.type":                         {"RollingUpdate"},
			"spec.strategy.rollingUpdate.maxSurge":       {"25%"},
			"spec.strategy.rollingUpdate.maxUnavailable": {"25%"},
		},
		"StatefulSet": {
			"spec.replicas":                                         {1},
			"spec.revisionHistoryLimit":                             {10},
			"spec.podManagementPolicy":                              {"OrderedReady"},
			"spec.updateStrategy.type":                              {"RollingUpdate"},
			"spec.updateStrategy.rollingUpdate.partition":           {0},
			"spec.updateStrategy.rollingUpdate.maxUnavailable":      {1},
			"spec.persistentVolumeClaimRetentionPolicy.whenDeleted": {"Retain"},
			"spec.persistentVolumeClaimRetentionPolicy.whenScaled":  {"Retain"},
			"spec.volumeClaimTemplates[*].apiVersion":               {"v1"},
			"spec.volumeClaimTemplates[*].kind":                     {"PersistentVolumeClaim"},
			"spec.volumeClaimTemplates[*].spec.volumeMode":          {"Filesystem"},
			"spec.volumeClaimTemplates[*].status.phase":             {"Pending"},
		},
		"DaemonSet": {
			"spec.revisionHistoryLimit":                        {10},
			"spec.updateStrategy.type":                         {"RollingUpdate"},
			"spec.updateStrategy.rollingUpdate.maxUnavailable": {1},
			"spec.updateStrategy.rollingUpdate.maxSurge":       {0},
		},
		"ReplicaSet": {
			"spec.replicas": {1},
		},
	}
}

// podSpecDefaults are relative to a pod spec.
func podSpecDefaults() map[string][]any {
	return map[string][]any{
		"restartPolicy":                      {"Always"},
		"terminationGracePeriodSeconds":      {30},
		"dnsPolicy":                          {"ClusterFirst"},
		"schedulerName":                      {"default-scheduler"},
		"enableServiceLinks":                 {true},
		"volumes[*].configMap.defaultMode":   {420},
		"volumes[*].secret.defaultMode":      {420},
		"volumes[*].projected.defaultMode":   {420},
		"volumes[*].downwardAPI.defaultMode": {420},
		"volumes[*].hostPath.type":           {""},
	}
}

// containerDefaults are relative to a container; imagePullPolicy is
// handled by isDefault because it depends on the image.
func containerDefaults() map[string][]any {
	return map[string][]any{
		"terminationMessagePath":               {"/dev/termination-log"},
		"terminationMessagePolicy":             {"File"},
		"ports[*].protocol":                    {"TCP"},
		"env[*].valueFrom.fieldRef.apiVersion": {"v1"},
	}
}

// probeDefaults are relative to a probe.
func probeDefaults() map[string][]any {
	return map[string][]any{
		"timeoutSeconds":   {1},
		"periodSeconds":    {10},
		"successThreshold": {1},
		"failureThreshold": {3},
		"httpGet.scheme":   {"HTTP"},
	}
}

// podSpecPrefixes are where a pod spec sits, by kind.
func podSpecPrefixes() map[string]string {
	return map[string]string{
		"Deployment":  "spec.template.spec.",
		"StatefulSet": "spec.template.spec.",
		"DaemonSet":   "spec.template.spec.",
		"ReplicaSet":  "spec.template.spec.",
		"Job":         "spec.template.spec.",
		"CronJob":     "spec.jobTemplate.spec.template.spec.",
		"Pod":         "spec.",
		"PodTemplate": "template.spec.",
	}
}

// defaultTable is the default values by kind, then path pattern.
type defaultTable map[string]map[string][]any

// newDefaultTable builds the table for every kind that has defaults.
func newDefaultTable() defaultTable {
	t := defaultTable{}
	for kind, d := range kindDefaults() {
		t[kind] = d
	}
	for kind, prefix := range podSpecPrefixes() {
		if t[kind] == nil {
			t[kind] = map[string][]any{}
		}
		addPodSpecDefaults(t[kind], prefix)
	}
	return t
}

func addPodSpecDefaults(out map[string][]any, prefix string) {
	for k, v := range podSpecDefaults() {
		out[prefix+k] = v
	}
	for _, c := range []string{"containers[*].", "initContainers[*].", "ephemeralContainers[*]."} {
		for k, v := range containerDefaults() {
			out[prefix+c+k] = v
		}
		for _, probe := range []string{"livenessProbe.", "readinessProbe.", "startupProbe."} {
			for k, v := range probeDefaults() {
				out[prefix+c+probe+k] = v
			}
		}
	}
}

// isDefault reports whether value v at p is what the server fills in for
// kind when a manifest leaves the field out. Empty objects and nulls count
// as defaults: the server writes them (resources: {}, securityContext: {},
// creationTimestamp: null) and they hold no setting. imagePullPolicy is the
// default for the image of any of objs (the server defaulted it for the
// image of its time, and does not redo it when the image changes).
func (t defaultTable) isDefault(kind string, p Path, v any, objs ...map[string]any) bool {
	if isEmpty(v) {
		return true
	}
	pattern := patternOf(p)
	if strings.HasSuffix(pattern, "].imagePullPolicy") {
		for _, obj := range objs {
			if v == defaultPullPolicy(obj, p) {
				return true
			}
		}
		return false
	}
	for _, d := range t[kind][pattern] {
		if jsonEqual(d, v) {
			return true
		}
	}
	return false
}

func isEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

// defaultPullPolicy is Always for an image without a tag or tagged latest,
// IfNotPresent otherwise.
func defaultPullPolicy(obj map[string]any, p Path) string {
	image, _ := lookup(obj, p[:len(p)-1].Append(fieldName("image")))
	name, _ := image.(string)
	if strings.Contains(name, "@") {
		return "IfNotPresent"
	}
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	tag := ""
	if i := strings.LastIndex(name, ":"); i >= 0 {
		tag = name[i+1:]
	}
	if tag == "" || tag == "latest" {
		return "Always"
	}
	return "IfNotPresent"
}

// patternOf renders p with every list element as [*].
func patternOf(p Path) string {
	var b strings.Builder
	for i, pe := range p {
		if pe.FieldName == nil {
			b.WriteString("[*]")
			continue
		}
		writeElement(&b, pe, i == 0)
	}
	return b.String()
}
