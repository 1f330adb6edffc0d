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

var (
	validatingWebhooks = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}
	namespaces         = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	deployments        = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// fakeCluster is a fake API server holding the objects of files and the
// namespaces given by name with their labels.
func fakeCluster(t *testing.T, ns map[string]map[string]string, files ...string) *cluster.Cluster {
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
	for name, labels := range ns {
		u := object(namespaces, "Namespace", "", labels)
		u.SetName(name)
		objs = append(objs, u)
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{validatingWebhooks: "ValidatingWebhookConfigurationList", namespaces: "NamespaceList"}, objs...)
	return cluster.New(client, meta.NewDefaultRESTMapper(nil))
}

func TestWebhookScopeReviews(t *testing.T) {
	c := fakeCluster(t, map[string]map[string]string{
		"shop":        {"kubernetes.io/metadata.name": "shop"},
		"legacy":      {"kubernetes.io/metadata.name": "legacy"},
		"ignored":     {"kubernetes.io/metadata.name": "ignored", "apply-hygiene.io/ignore": ""},
		"kube-system": {"kubernetes.io/metadata.name": "kube-system"},
	}, "testdata/validating-workloads.yaml")
	scope := c.WebhookScope(t.Context())
	if scope == nil || len(scope.Names) != 1 || scope.Names[0] != "apply-hygiene" {
		t.Fatalf("WebhookScope = %+v, want the chart's configuration apply-hygiene", scope)
	}
	skip := map[string]string{"apply-hygiene.io/skip": "yes"}
	cases := []struct {
		name     string
		gvr      schema.GroupVersionResource
		kind     string
		ns       string
		old, new map[string]string // the objects' labels
		want     bool
	}{
		{name: "a Deployment", gvr: deployments, kind: "Deployment", ns: "shop", want: true},
		{name: "a Deployment of another version (matchPolicy Equivalent)", gvr: schema.GroupVersionResource{Group: "apps", Version: "v1beta2", Resource: "deployments"}, kind: "Deployment", ns: "shop", want: true},
		{name: "a DaemonSet", gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, kind: "DaemonSet", ns: "shop", want: true},
		{name: "a Secret (kinds=workloads)", gvr: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, kind: "Secret", ns: "shop"},
		{name: "a ConfigMap (kinds=workloads)", gvr: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, kind: "ConfigMap", ns: "shop"},
		{name: "a ReplicaSet (another apps resource)", gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, kind: "ReplicaSet", ns: "shop"},
		{name: "a Deployment in an excluded namespace", gvr: deployments, kind: "Deployment", ns: "legacy"},
		{name: "a Deployment in a namespace labelled apply-hygiene.io/ignore", gvr: deployments, kind: "Deployment", ns: "ignored"},
		{name: "a Deployment in kube-system", gvr: deployments, kind: "Deployment", ns: "kube-system"},
		{name: "a Deployment in a namespace that cannot be read", gvr: deployments, kind: "Deployment", ns: "unreadable", want: true},
		{name: "a Deployment labelled out by the objectSelector", gvr: deployments, kind: "Deployment", ns: "shop", old: skip, new: skip},
		{name: "a Deployment whose apply drops the objectSelector's label (the new object matches)", gvr: deployments, kind: "Deployment", ns: "shop", old: skip, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old, updated := object(tc.gvr, tc.kind, tc.ns, tc.old), object(tc.gvr, tc.kind, tc.ns, tc.new)
			if got := scope.Reviews(t.Context(), old, updated, tc.gvr); got != tc.want {
				t.Errorf("Reviews = %v, want %v", got, tc.want)
			}
		})
	}
}

// A Namespace's own write is matched on the labels it leaves (the API
// server's namespace matcher takes them from the new object), with the
// common kinds, which send Namespaces.
func TestWebhookScopeMatchesANamespaceOnItsNewLabels(t *testing.T) {
	scope := fakeCluster(t, nil, "testdata/validating-common.yaml").WebhookScope(t.Context())
	if scope == nil {
		t.Fatal("no scope")
	}
	ignore := map[string]string{"apply-hygiene.io/ignore": "true"}
	for _, tc := range []struct {
		name     string
		old, new map[string]string
		want     bool
	}{
		{"plain", nil, nil, true},
		{"the apply drops apply-hygiene.io/ignore: sent", ignore, nil, true},
		{"the apply adds apply-hygiene.io/ignore: not sent", nil, ignore, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, updated := object(namespaces, "Namespace", "", tc.old), object(namespaces, "Namespace", "", tc.new)
			if got := scope.Reviews(t.Context(), old, updated, namespaces); got != tc.want {
				t.Errorf("Reviews = %v, want %v", got, tc.want)
			}
		})
	}
}

// An objectSelector that asks for a label matches whatever the labels: a
// mutating webhook may add it before the validating one is called.
func TestWebhookScopeAssumesAnObjectSelectorThatAsksForALabelMatches(t *testing.T) {
	scope := fakeCluster(t, map[string]map[string]string{"shop": {}}, "testdata/validating-url.yaml").WebhookScope(t.Context())
	if scope == nil || len(scope.Names) != 1 || scope.Names[0] != "apply-hygiene-dev" {
		t.Fatalf("WebhookScope = %+v, want apply-hygiene-dev", scope)
	}
	if !scope.Reviews(t.Context(), object(deployments, "Deployment", "shop", nil), object(deployments, "Deployment", "shop", nil), deployments) {
		t.Error("a Deployment without the label the objectSelector asks for: not sent")
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

// Every configuration that holds apply-hygiene's validating webhook
// counts, whatever its name or namespace: the API server calls them all.
// With none, or none readable, there is no scope and diff judges every
// write.
func TestWebhookScopeReadsEveryInstallation(t *testing.T) {
	if s := fakeCluster(t, nil).WebhookScope(t.Context()); s != nil {
		t.Errorf("no configuration gave scope %v", s.Names)
	}
	s := fakeCluster(t, map[string]map[string]string{"shop": {}}, "testdata/validating-workloads.yaml", "testdata/validating-common.yaml").WebhookScope(t.Context())
	if s == nil || len(s.Names) != 2 || s.Names[0] != "apply-hygiene" || s.Names[1] != "platform-hygiene" {
		t.Fatalf("two installations: scope %+v, want apply-hygiene and platform-hygiene", s)
	}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	if !s.Reviews(t.Context(), object(secrets, "Secret", "shop", nil), object(secrets, "Secret", "shop", nil), secrets) {
		t.Error("a Secret that the common kinds' installation reviews: not sent")
	}
}
