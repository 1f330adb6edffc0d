package chart_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// TestHelmTestHook checks what helm test runs: one test hook, the pod,
// kept after the test (for helm test --logs, and for a look when it
// failed) until the next one, and failed by the kubelet after
// test.activeDeadlineSeconds; what it needs is release resources, not
// hooks (helm test lists every test hook as a suite). The pod runs the
// chart's files/helm-test.sh from its ConfigMap, against a Deployment
// whose last-applied is the Deployment itself, and no test object is one
// of the server's pods.
func TestHelmTestHook(t *testing.T) {
	all := decode(t, renderWithTests(t, "full"))
	var hooks, supports []*unstructured.Unstructured
	for _, o := range all {
		switch {
		case o.GetAnnotations()["helm.sh/hook"] != "":
			hooks = append(hooks, o)
		case o.GetLabels()["app.kubernetes.io/component"] == "test":
			supports = append(supports, o)
		}
	}
	names := func(objs []*unstructured.Unstructured) []string {
		var out []string
		for _, o := range objs {
			out = append(out, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
		}
		return out
	}
	if diff := cmp.Diff([]string{"Pod apply-hygiene/ah-apply-hygiene-test"}, names(hooks)); diff != "" {
		t.Errorf("hooks (-want +got):\n%s", diff)
	}
	// In helm template's order.
	want := []string{
		"Namespace /ah-apply-hygiene-test",
		"ServiceAccount apply-hygiene/ah-apply-hygiene-test",
		"ConfigMap apply-hygiene/ah-apply-hygiene-test",
		"Role ah-apply-hygiene-test/ah-apply-hygiene-test",
		"Role apply-hygiene/ah-apply-hygiene-test",
		"RoleBinding ah-apply-hygiene-test/ah-apply-hygiene-test",
		"RoleBinding apply-hygiene/ah-apply-hygiene-test",
		"Deployment ah-apply-hygiene-test/ah-apply-hygiene-test",
	}
	if diff := cmp.Diff(want, names(supports)); diff != "" {
		t.Errorf("the test's release resources (-want +got):\n%s", diff)
	}
	wantHook := map[string]string{"helm.sh/hook": "test", "helm.sh/hook-delete-policy": "before-hook-creation"}
	if diff := cmp.Diff(wantHook, hooks[0].GetAnnotations()); diff != "" {
		t.Errorf("the test pod's hook annotations (-want +got):\n%s", diff)
	}
	if off := decode(t, renderWithTests(t, "full", "--set", "test.enabled=false")); len(off) != len(all)-len(hooks)-len(supports) {
		t.Errorf("test.enabled=false renders %d objects, want %d: all but the test's", len(off), len(all)-len(hooks)-len(supports))
	}

	script, err := os.ReadFile(filepath.Join(chartDir(t), "files", "helm-test.sh"))
	if err != nil {
		t.Fatalf("reading the test script: %v", err)
	}
	cm := only[corev1.ConfigMap](t, supports, "ConfigMap")
	if diff := cmp.Diff(string(script), cm.Data["helm-test.sh"]); diff != "" {
		t.Errorf("the ConfigMap's script differs from files/helm-test.sh (-file +configmap):\n%s", diff)
	}
	pod := only[corev1.Pod](t, hooks, "Pod")
	if d := pod.Spec.ActiveDeadlineSeconds; d == nil || *d != 180 {
		t.Errorf("test pod activeDeadlineSeconds = %v, want 180", d)
	}
	c := pod.Spec.Containers[0]
	if diff := cmp.Diff([]string{"sh", "/etc/apply-hygiene/test/" + "helm-test.sh"}, c.Command); diff != "" {
		t.Errorf("test pod command (-want +got):\n%s", diff)
	}
	if c.Image != "registry.example.com/tools/kubectl:1.34" || pod.Spec.ServiceAccountName != "ah-apply-hygiene-test" ||
		pod.Spec.Volumes[0].ConfigMap.Name != cm.Name || c.VolumeMounts[0].MountPath != "/etc/apply-hygiene/test" {
		t.Errorf("test pod image %q, service account %q, script volume %v mounted at %q", c.Image, pod.Spec.ServiceAccountName,
			pod.Spec.Volumes[0].ConfigMap, c.VolumeMounts[0].MountPath)
	}

	deploy := only[appsv1.Deployment](t, supports, "Deployment")
	var lastApplied map[string]any
	if err := json.Unmarshal([]byte(deploy.Annotations["kubectl.kubernetes.io/last-applied-configuration"]), &lastApplied); err != nil {
		t.Fatalf("decoding the test Deployment's last-applied: %v", err)
	}
	var rendered map[string]any
	for _, o := range supports {
		if o.GetKind() == "Deployment" {
			rendered = map[string]any{"apiVersion": o.GetAPIVersion(), "kind": o.GetKind(),
				"metadata": map[string]any{"name": o.GetName(), "namespace": o.GetNamespace()}, "spec": o.Object["spec"]}
		}
	}
	if diff := cmp.Diff(rendered, lastApplied); diff != "" {
		t.Errorf("the test Deployment's last-applied is not the Deployment (-rendered +last-applied):\n%s", diff)
	}
	if got := *deploy.Spec.Replicas; got != 0 {
		t.Errorf("test Deployment replicas = %d, want 0 (no pods)", got)
	}

	server := only[appsv1.Deployment](t, decode(t, render(t, "full")), "Deployment")
	selector := labels.SelectorFromSet(server.Spec.Selector.MatchLabels)
	for _, o := range append(hooks, supports...) {
		if selector.Matches(labels.Set(o.GetLabels())) {
			t.Errorf("%s %s has the server's pod labels %v", o.GetKind(), o.GetName(), o.GetLabels())
		}
	}
}

// TestArtifactHubImages checks that Chart.yaml's artifacthub.io/images
// names the images the chart's defaults run.
func TestArtifactHubImages(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(chartDir(t), "Chart.yaml"))
	if err != nil {
		t.Fatalf("reading Chart.yaml: %v", err)
	}
	var chart struct {
		AppVersion  string            `json:"appVersion"`
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(raw, &chart); err != nil {
		t.Fatalf("parsing Chart.yaml: %v", err)
	}
	var images []struct{ Name, Image string }
	if err := yaml.Unmarshal([]byte(chart.Annotations["artifacthub.io/images"]), &images); err != nil {
		t.Fatalf("parsing artifacthub.io/images: %v", err)
	}
	objs := decode(t, renderWithTests(t, "default"))
	var got []string
	for _, i := range images {
		got = append(got, i.Image)
	}
	want := []string{
		only[appsv1.Deployment](t, decode(t, render(t, "default")), "Deployment").Spec.Template.Spec.Containers[0].Image,
		only[corev1.Pod](t, objs, "Pod").Spec.Containers[0].Image,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("artifacthub.io/images differ from the rendered images (-rendered +Chart.yaml):\n%s", diff)
	}
	for _, key := range []string{"artifacthub.io/changes", "artifacthub.io/links", "artifacthub.io/operator"} {
		if chart.Annotations[key] == "" {
			t.Errorf("Chart.yaml has no %s annotation", key)
		}
	}
}
