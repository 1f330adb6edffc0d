package merge_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// merge does not report an orphan whose value is the server's default
// (removing it brings it back). Its table of defaults is hand-written, so
// this holds it to the pinned API server: every field below, left out of
// testdata/server-defaults, is filled in by the server with the value the
// table gives it.
func TestServerDefaultsAreTheServers(t *testing.T) {
	f := framework.New(t)
	defaulted := map[string][]string{
		"Deployment": {
			"spec.revisionHistoryLimit", "spec.progressDeadlineSeconds", "spec.strategy.type",
			"spec.strategy.rollingUpdate.maxSurge", "spec.strategy.rollingUpdate.maxUnavailable",
			"spec.template.spec.restartPolicy", "spec.template.spec.dnsPolicy", "spec.template.spec.schedulerName",
			"spec.template.spec.terminationGracePeriodSeconds", "spec.template.spec.securityContext",
			"spec.template.spec.containers[name=app].resources",
			"spec.template.spec.containers[name=app].terminationMessagePath",
			"spec.template.spec.containers[name=app].terminationMessagePolicy",
			"spec.template.spec.containers[name=app].imagePullPolicy",
			"spec.template.spec.containers[name=latest].imagePullPolicy",
			"spec.template.spec.containers[name=app].ports[containerPort=80,protocol=TCP].protocol",
			"spec.template.spec.containers[name=app].env[name=NODE].valueFrom.fieldRef.apiVersion",
			"spec.template.spec.containers[name=app].readinessProbe.timeoutSeconds",
			"spec.template.spec.containers[name=app].readinessProbe.periodSeconds",
			"spec.template.spec.containers[name=app].readinessProbe.successThreshold",
			"spec.template.spec.containers[name=app].readinessProbe.failureThreshold",
			"spec.template.spec.containers[name=app].readinessProbe.httpGet.scheme",
			"spec.template.spec.containers[name=app].livenessProbe.periodSeconds",
			"spec.template.spec.initContainers[name=init].terminationMessagePath",
			"spec.template.spec.initContainers[name=init].imagePullPolicy",
			"spec.template.spec.volumes[name=config].configMap.defaultMode",
			"spec.template.spec.volumes[name=secret].secret.defaultMode",
			"spec.template.spec.volumes[name=projected].projected.defaultMode",
			"spec.template.spec.volumes[name=downward].downwardAPI.defaultMode",
			"spec.template.spec.volumes[name=hostpath].hostPath.type",
		},
		"StatefulSet": {
			"spec.revisionHistoryLimit", "spec.podManagementPolicy", "spec.updateStrategy.type",
			"spec.updateStrategy.rollingUpdate.partition", "spec.updateStrategy.rollingUpdate.maxUnavailable",
			"spec.persistentVolumeClaimRetentionPolicy.whenDeleted", "spec.persistentVolumeClaimRetentionPolicy.whenScaled",
		},
		"DaemonSet": {
			"spec.revisionHistoryLimit", "spec.updateStrategy.type",
			"spec.updateStrategy.rollingUpdate.maxUnavailable", "spec.updateStrategy.rollingUpdate.maxSurge",
		},
		"Service": {
			"spec.type", "spec.sessionAffinity", "spec.internalTrafficPolicy", "spec.ipFamilyPolicy",
			"spec.ports[port=80,protocol=TCP].protocol", "spec.ports[port=80,protocol=TCP].targetPort",
		},
		"CronJob": {
			"spec.suspend", "spec.concurrencyPolicy", "spec.successfulJobsHistoryLimit", "spec.failedJobsHistoryLimit",
			"spec.jobTemplate.spec.template.spec.dnsPolicy",
			"spec.jobTemplate.spec.template.spec.containers[name=app].imagePullPolicy",
		},
		"Job": {
			"spec.backoffLimit", "spec.completions", "spec.parallelism", "spec.completionMode", "spec.suspend",
			"spec.podReplacementPolicy", "spec.manualSelector", "spec.template.spec.terminationGracePeriodSeconds",
		},
		"HorizontalPodAutoscaler": {"spec.minReplicas"},
		// The defaults that follow from a Service's type and session
		// affinity (what the removal proofs found).
		"Service/load-balancer": {
			"spec.externalTrafficPolicy", "spec.allocateLoadBalancerNodePorts",
			"spec.sessionAffinityConfig", "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
		},
		"Service/node-port": {"spec.externalTrafficPolicy"},
	}
	raw, err := os.ReadFile("testdata/server-defaults/objects.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: obj}
		kind := u.GetKind()
		if u.GetName() != "defaults" {
			kind += "/" + u.GetName()
		}
		seen[kind] = true
		out := f.Kubectl.RunWithInput(t, doc, "create", "--dry-run=server", "-o", "json", "-f", "-").MustSucceed(t)
		var stored map[string]any
		if err := json.Unmarshal([]byte(out.Stdout), &stored); err != nil {
			t.Fatalf("decoding the %s the server returned: %v", kind, err)
		}
		for _, s := range defaulted[kind] {
			p, err := merge.ParsePath(s)
			if err != nil {
				t.Fatal(err)
			}
			if !merge.IsServerDefault(stored, p) {
				t.Errorf("%s %s: the server left it out or filled in a value other than merge's table of defaults gives (see merge/serverdefaults.go)", kind, s)
			}
		}
	}
	for kind := range defaulted {
		if !seen[kind] {
			t.Errorf("testdata/server-defaults/objects.yaml has no %s", kind)
		}
	}
}

// kubectl hygiene diff gives a StatefulSet's volumeClaimTemplates the
// defaults the API server stores (merge.WithClaimTemplateDefaults), so the
// list kubectl apply sends whole is no change: the pinned server stores a
// manifest's bare template exactly so.
func TestClaimTemplateDefaultsAreTheServers(t *testing.T) {
	f := framework.New(t)
	manifest := `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web"},"spec":{"serviceName":"web",
	  "selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx:1.27"}]}},
	  "volumeClaimTemplates":[{"metadata":{"name":"www"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}]}}`
	out := f.Kubectl.RunWithInput(t, manifest, "create", "--dry-run=server", "-o", "json", "-f", "-").MustSucceed(t)
	var stored, want unstructured.Unstructured
	if err := json.Unmarshal([]byte(out.Stdout), &stored.Object); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(manifest), &want.Object); err != nil {
		t.Fatal(err)
	}
	got, _, _ := unstructured.NestedSlice(merge.WithClaimTemplateDefaults(&want).Object, "spec", "volumeClaimTemplates")
	server, _, _ := unstructured.NestedSlice(stored.Object, "spec", "volumeClaimTemplates")
	g, _ := json.Marshal(got)
	s, _ := json.Marshal(server)
	if string(g) != string(s) {
		t.Errorf("volumeClaimTemplates with the defaults:\n%s\nas the API server stores them:\n%s", g, s)
	}
}
