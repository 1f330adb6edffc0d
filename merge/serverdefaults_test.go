package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestIsServerDefault(t *testing.T) {
	deployment := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{
			map[string]any{"name": "app", "image": "nginx:1.27"},
			map[string]any{"name": "latest", "image": "registry.example/team/tool"},
		},
	}}}}
	withServiceAccount := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"serviceAccountName": "builder", "serviceAccount": "builder",
	}}}}
	service := map[string]any{"apiVersion": "v1", "kind": "Service", "spec": map[string]any{"ports": []any{
		map[string]any{"port": int64(80), "protocol": "TCP", "targetPort": int64(80)},
	}}}
	statefulSet := map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet"}
	container := func(name string, rest ...string) Path {
		p := mustParsePath(t, "spec.template.spec.containers[name="+name+"]")
		for _, f := range rest {
			p = append(p, fieldName(f))
		}
		return p
	}
	port80 := mustParsePath(t, "spec.ports[port=80,protocol=TCP]")
	tests := []struct {
		name string
		kind string
		obj  map[string]any
		p    Path
		v    any
		want bool
	}{
		{"terminationMessagePath", "Deployment", deployment, container("app", "terminationMessagePath"), "/dev/termination-log", true},
		// k8s.io/kubernetes pkg/apis/batch/v1 SetObjectDefaults_CronJob,
		// SetDefaults_Job and core/v1 SetDefaults_Service, at v1.37.0.
		{"a CronJob's job template gets no Job defaults", "CronJob", map[string]any{"kind": "CronJob"}, mustParsePath(t, "spec.jobTemplate.spec.backoffLimit"), int64(6), false},
		{"a Job's backoffLimit", "Job", map[string]any{"kind": "Job", "spec": map[string]any{}}, mustParsePath(t, "spec.backoffLimit"), int64(6), true},
		{"... with backoffLimitPerIndex it is MaxInt32", "Job", map[string]any{"kind": "Job", "spec": map[string]any{"backoffLimitPerIndex": int64(1)}},
			mustParsePath(t, "spec.backoffLimit"), int64(6), false},
		{"a Job's podReplacementPolicy", "Job", map[string]any{"kind": "Job", "spec": map[string]any{}}, mustParsePath(t, "spec.podReplacementPolicy"), "TerminatingOrFailed", true},
		{"... with a podFailurePolicy it is Failed", "Job", map[string]any{"kind": "Job", "spec": map[string]any{"podFailurePolicy": map[string]any{}}},
			mustParsePath(t, "spec.podReplacementPolicy"), "TerminatingOrFailed", false},
		{"internalTrafficPolicy of a ClusterIP Service", "Service", service, mustParsePath(t, "spec.internalTrafficPolicy"), "Cluster", true},
		{"an ExternalName Service has no internalTrafficPolicy", "Service", serviceOf("type", "ExternalName"), mustParsePath(t, "spec.internalTrafficPolicy"), "Cluster", false},
		{"... nor ipFamilyPolicy", "Service", serviceOf("type", "ExternalName"), mustParsePath(t, "spec.ipFamilyPolicy"), "SingleStack", false},
		{"the deprecated serviceAccount is serviceAccountName's", "Deployment", withServiceAccount, mustParsePath(t, "spec.template.spec.serviceAccount"), "builder", true},
		{"serviceAccountName itself is set", "Deployment", withServiceAccount, mustParsePath(t, "spec.template.spec.serviceAccountName"), "builder", false},
		{"a serviceAccount other than serviceAccountName is set", "Deployment", withServiceAccount, mustParsePath(t, "spec.template.spec.serviceAccount"), "other", false},
		{"another terminationMessagePath", "Deployment", deployment, container("app", "terminationMessagePath"), "/tmp/log", false},
		{"imagePullPolicy of a tagged image", "Deployment", deployment, container("app", "imagePullPolicy"), "IfNotPresent", true},
		{"Always for a tagged image is set", "Deployment", deployment, container("app", "imagePullPolicy"), "Always", false},
		{"imagePullPolicy of an untagged image", "Deployment", deployment, container("latest", "imagePullPolicy"), "Always", true},
		{"probe period", "Deployment", deployment, append(container("app", "readinessProbe"), fieldName("periodSeconds")), int64(10), true},
		{"probe period 5", "Deployment", deployment, append(container("app", "readinessProbe"), fieldName("periodSeconds")), int64(5), false},
		{"targetPort equal to the port", "Service", service, append(port80.Append(), fieldName("targetPort")), int64(80), true},
		{"targetPort other than the port", "Service", service, append(port80.Append(), fieldName("targetPort")), int64(8080), false},
		{"sessionAffinity", "Service", service, mustParsePath(t, "spec.sessionAffinity"), "None", true},
		{"ClientIP affinity", "Service", service, mustParsePath(t, "spec.sessionAffinity"), "ClientIP", false},
		{"a field without a default", "Service", service, mustParsePath(t, "spec.externalName"), "", false},
		{"externalTrafficPolicy Cluster of a NodePort", "Service", serviceOf("type", "NodePort"), mustParsePath(t, "spec.externalTrafficPolicy"), "Cluster", true},
		{"externalTrafficPolicy Cluster of a LoadBalancer", "Service", serviceOf("type", "LoadBalancer"), mustParsePath(t, "spec.externalTrafficPolicy"), "Cluster", true},
		{"externalTrafficPolicy Local of a NodePort is set", "Service", serviceOf("type", "NodePort"), mustParsePath(t, "spec.externalTrafficPolicy"), "Local", false},
		{"externalTrafficPolicy of a ClusterIP is set", "Service", service, mustParsePath(t, "spec.externalTrafficPolicy"), "Cluster", false},
		{"allocateLoadBalancerNodePorts of a LoadBalancer", "Service", serviceOf("type", "LoadBalancer"), mustParsePath(t, "spec.allocateLoadBalancerNodePorts"), true, true},
		{"a StatefulSet's maxUnavailable 1", "StatefulSet", statefulSet, mustParsePath(t, "spec.updateStrategy.rollingUpdate.maxUnavailable"), int64(1), true},
		{"a StatefulSet's maxUnavailable 2 is set", "StatefulSet", statefulSet, mustParsePath(t, "spec.updateStrategy.rollingUpdate.maxUnavailable"), int64(2), false},
		{"a StatefulSet's whenDeleted Retain", "StatefulSet", statefulSet, mustParsePath(t, "spec.persistentVolumeClaimRetentionPolicy.whenDeleted"), "Retain", true},
		{"a StatefulSet's whenScaled Delete is set", "StatefulSet", statefulSet, mustParsePath(t, "spec.persistentVolumeClaimRetentionPolicy.whenScaled"), "Delete", false},
		{"allocateLoadBalancerNodePorts false is set", "Service", serviceOf("type", "LoadBalancer"), mustParsePath(t, "spec.allocateLoadBalancerNodePorts"), false, false},
		{"allocateLoadBalancerNodePorts of a NodePort is set", "Service", serviceOf("type", "NodePort"), mustParsePath(t, "spec.allocateLoadBalancerNodePorts"), true, false},
		{"sessionAffinityConfig of ClientIP", "Service", serviceOf("sessionAffinity", "ClientIP"), mustParsePath(t, "spec.sessionAffinityConfig"),
			map[string]any{"clientIP": map[string]any{"timeoutSeconds": int64(10800)}}, true},
		{"its timeoutSeconds", "Service", serviceOf("sessionAffinity", "ClientIP"), mustParsePath(t, "spec.sessionAffinityConfig.clientIP.timeoutSeconds"), int64(10800), true},
		{"another timeoutSeconds is set", "Service", serviceOf("sessionAffinity", "ClientIP"), mustParsePath(t, "spec.sessionAffinityConfig.clientIP.timeoutSeconds"), int64(60), false},
		{"sessionAffinityConfig without ClientIP is set", "Service", service, mustParsePath(t, "spec.sessionAffinityConfig"),
			map[string]any{"clientIP": map[string]any{"timeoutSeconds": int64(10800)}}, false},
		{"a kind without defaults", "ConfigMap", map[string]any{}, mustParsePath(t, "data.a"), "TCP", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := isServerDefault(tc.kind, tc.obj, tc.p, tc.v); got != tc.want {
				t.Errorf("isServerDefault(%s, %s, %v) = %v, want %v", tc.kind, tc.p, tc.v, got, tc.want)
			}
		})
	}
}

// serviceOf is a Service whose spec has field set to value.
func serviceOf(field, value string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Service", "spec": map[string]any{field: value}}
}

func mustParsePath(t *testing.T, s string) Path {
	t.Helper()
	p, err := ParsePath(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// unstructuredOf decodes s as the API server's objects are: numbers as
// int64.
func unstructuredOf(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(s)); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestWithClaimTemplateDefaults(t *testing.T) {
	tests := map[string]struct{ in, want string }{
		"a manifest's bare template gets what the API server stores": {
			in: `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web"},"spec":{"volumeClaimTemplates":[
			  {"metadata":{"name":"www"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}]}}`,
			want: `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web"},"spec":{"volumeClaimTemplates":[
			  {"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"www"},
			   "spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},"volumeMode":"Filesystem"},"status":{"phase":"Pending"}}]}}`,
		},
		"set values stay": {
			in:   `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web"},"spec":{"volumeClaimTemplates":[{"metadata":{"name":"raw"},"spec":{"volumeMode":"Block"},"status":{"phase":"Bound"}}]}}`,
			want: `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web"},"spec":{"volumeClaimTemplates":[{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"raw"},"spec":{"volumeMode":"Block"},"status":{"phase":"Bound"}}]}}`,
		},
		"another kind is left alone": {
			in:   `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"volumeClaimTemplates":[{}]}}`,
			want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"volumeClaimTemplates":[{}]}}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := unstructuredOf(t, tc.in)
			before := in.DeepCopy()
			got := WithClaimTemplateDefaults(in)
			if diff := cmp.Diff(unstructuredOf(t, tc.want).Object, got.Object); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before.Object, in.Object); diff != "" {
				t.Errorf("the input changed (-before +after):\n%s", diff)
			}
		})
	}
}

func TestWithReplicasDefault(t *testing.T) {
	tests := map[string]struct{ in, want string }{
		"a Deployment without replicas gets 1": {
			in:   `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"paused":true}}`,
			want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"paused":true,"replicas":1}}`,
		},
		"a StatefulSet without a spec gets 1": {
			in:   `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web"}}`,
			want: `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web"},"spec":{"replicas":1}}`,
		},
		"a count stays, 0 included": {
			in:   `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web"},"spec":{"replicas":0}}`,
			want: `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web"},"spec":{"replicas":0}}`,
		},
		"a ReplicationController without replicas gets 1": {
			in:   `{"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"web"},"spec":{}}`,
			want: `{"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"web"},"spec":{"replicas":1}}`,
		},
		"a DaemonSet has no count": {
			in:   `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"web"},"spec":{}}`,
			want: `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"web"},"spec":{}}`,
		},
		"a custom Deployment is no apps Deployment": {
			in:   `{"apiVersion":"example.com/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{}}`,
			want: `{"apiVersion":"example.com/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{}}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in, want := unstructuredOf(t, tc.in), unstructuredOf(t, tc.want)
			before := in.DeepCopy()
			got := WithReplicasDefault(in)
			if diff := cmp.Diff(want.Object, got.Object); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before.Object, in.Object); diff != "" {
				t.Errorf("the input changed (-before +after):\n%s", diff)
			}
		})
	}
}

// A manifest that still writes the deprecated serviceAccount sets the
// name too: after kubectl set serviceaccount put the manifest's value back
// (kubectl-set then owns both fields), the apply of that manifest has no
// orphan, and no command that would remove the service account.
func TestServiceAccountHeldThroughItsAliasIsNoOrphan(t *testing.T) {
	manifest := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"ns"},"spec":{"selector":{"matchLabels":{"app":"d"}},` +
		`"template":{"metadata":{"labels":{"app":"d"}},"spec":{"serviceAccount":"foo","containers":[{"name":"app","image":"nginx:1"}]}}}}`
	obj := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(manifest)); err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedField(u.Object, "foo", "spec", "template", "spec", "serviceAccountName")
		u.SetAnnotations(map[string]string{LastAppliedAnnotation: manifest})
		u.SetManagedFields([]metav1.ManagedFieldsEntry{
			{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{"f:selector":{},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`)},
			{Manager: "kubectl-set", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:template":{"f:spec":{"f:serviceAccount":{},"f:serviceAccountName":{}}}}}`)},
		})
		return u
	}
	old, new := obj(), obj()
	_ = unstructured.SetNestedSlice(new.Object, []any{map[string]any{"name": "app", "image": "nginx:1"}}, "spec", "template", "spec", "containers")
	an, err := NewAnalyzer().AnalyzeClientSideApply(old, new)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(an.Orphans); len(got) != 0 {
		t.Errorf("orphans %q, want none: the manifest holds the service account through serviceAccount", got)
	}
}
