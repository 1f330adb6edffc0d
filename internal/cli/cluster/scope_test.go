package cluster_test

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
)

var validatingWebhooks = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}

// scopeOf is the WebhookScope of a fake API server holding the
// ValidatingWebhookConfigurations in files, for the chart in namespace.
func scopeOf(t *testing.T, namespace string, files ...string) *cluster.WebhookScope {
	t.Helper()
	var objs []runtime.Object
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw, &u.Object); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, u)
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{validatingWebhooks: "ValidatingWebhookConfigurationList"}, objs...)
	return cluster.New(client, meta.NewDefaultRESTMapper(nil)).WebhookScope(t.Context(), namespace)
}

func TestWebhookScopeReviews(t *testing.T) {
	scope := scopeOf(t, "apply-hygiene", "testdata/validating-workloads.yaml")
	if scope == nil || scope.Name != "apply-hygiene" {
		t.Fatalf("WebhookScope = %+v, want the chart's configuration apply-hygiene", scope)
	}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	cases := []struct {
		name     string
		gvr      schema.GroupVersionResource
		kind     string
		ns       string
		nsLabels map[string]string
		old, new map[string]string // the objects' labels
		want     bool
	}{
		{name: "a Deployment", gvr: deployments, kind: "Deployment", ns: "shop", want: true},
		{name: "a Deployment of another version (matchPolicy Equivalent)", gvr: schema.GroupVersionResource{Group: "apps", Version: "v1beta2", Resource: "deployments"}, kind: "Deployment", ns: "shop", want: true},
		{name: "a DaemonSet", gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, kind: "DaemonSet", ns: "shop", want: true},
		{name: "a Secret (kinds=workloads)", gvr: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, kind: "Secret", ns: "shop"},
		{name: "a ConfigMap (kinds=workloads)", gvr: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, kind: "ConfigMap", ns: "shop"},
		{name: "a ReplicaSet (another apps resource)", gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, kind: "ReplicaSet", ns: "shop"},
		{name: "a Deployment in an excluded namespace", gvr: deployments, kind: "Deployment", ns: "legacy", nsLabels: map[string]string{"kubernetes.io/metadata.name": "legacy"}},
		{name: "a Deployment in a namespace labelled apply-hygiene.io/ignore", gvr: deployments, kind: "Deployment", ns: "shop", nsLabels: map[string]string{"apply-hygiene.io/ignore": ""}},
		{name: "a Deployment in kube-system", gvr: deployments, kind: "Deployment", ns: "kube-system", nsLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}},
		{name: "a Deployment labelled out by the objectSelector", gvr: deployments, kind: "Deployment", ns: "shop", old: map[string]string{"apply-hygiene.io/skip": "yes"}, new: map[string]string{"apply-hygiene.io/skip": "yes"}},
		{name: "a Deployment whose apply drops the objectSelector's label (the new object matches)", gvr: deployments, kind: "Deployment", ns: "shop", old: map[string]string{"apply-hygiene.io/skip": "yes"}, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nsLabels := map[string]string{"kubernetes.io/metadata.name": tc.ns}
			for k, v := range tc.nsLabels {
				nsLabels[k] = v
			}
			old, updated := object(tc.gvr, tc.kind, tc.ns, tc.old), object(tc.gvr, tc.kind, tc.ns, tc.new)
			if got := scope.Reviews(old, updated, tc.gvr, nsLabels); got != tc.want {
				t.Errorf("Reviews = %v, want %v", got, tc.want)
			}
		})
	}
}

func object(gvr schema.GroupVersionResource, kind, namespace string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvr.GroupVersion().WithKind(kind))
	u.SetName("web")
	u.SetNamespace(namespace)
	u.SetLabels(labels)
	return u
}

// The chart's configuration is told apart from others by its namespace;
// when it cannot be, or none can be read, there is no scope and diff
// judges every write.
func TestWebhookScopeFindsTheChartsConfiguration(t *testing.T) {
	if s := scopeOf(t, "elsewhere", "testdata/validating-workloads.yaml"); s != nil {
		t.Errorf("a configuration calling a Service in another namespace gave scope %q", s.Name)
	}
	if s := scopeOf(t, "apply-hygiene"); s != nil {
		t.Errorf("no configuration gave scope %q", s.Name)
	}
	if s := scopeOf(t, "apply-hygiene", "testdata/validating-url.yaml"); s == nil || s.Name != "apply-hygiene-dev" {
		t.Errorf("the only configuration, in URL mode: scope %+v, want apply-hygiene-dev", s)
	}
}
