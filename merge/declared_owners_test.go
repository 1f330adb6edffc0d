package merge

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A field manager's declaration covers a finding only where that manager
// owns all the field holds: kubectl patch added a container and kubectl set
// image changed its image alone, so Argo CD's managedFieldsManagers:
// [kubectl-set] (every path, owner kubectl-set) leaves the orphaned
// container reported, as Argo CD still shows it out of sync (found by
// review).
func TestManagerDeclarationNeedsEveryOwner(t *testing.T) {
	entry := func(manager, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1",
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
	}
	manifest := mustYAML(t, []byte(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: "nginx:1"}
`))
	live := manifest.DeepCopy()
	setLastApplied(t, live, manifest)
	cs, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
	cs = append(cs, map[string]any{"name": "debug", "image": "busybox:2", "command": []any{"sleep", "1d"}})
	if err := unstructured.SetNestedSlice(live.Object, cs, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	live.SetManagedFields([]metav1.ManagedFieldsEntry{
		entry("kubectl-client-side-apply", `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`),
		entry("kubectl-patch", `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"debug\"}":{".":{},"f:command":{},"f:name":{}}}}}}}`),
		entry("kubectl-set", `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"debug\"}":{"f:image":{}}}}}}}`),
	})
	an, err := NewAnalyzer().AnalyzeClientSideApply(live, live.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if len(an.Orphans) != 1 || an.Orphans[0].Path.String() != "spec.template.spec.containers[name=debug]" {
		t.Fatalf("orphans = %v, want the container debug", an.Orphans)
	}
	for _, pattern := range []string{"*", "spec.template.spec.containers[*]"} {
		p, err := ParsePattern(pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := an.WithoutDeclared("kubectl-client-side-apply", []Declared{{Pattern: p, Manager: "kubectl-set"}}); len(got.Orphans) != 1 {
			t.Errorf("%s owned by kubectl-set hid the container that kubectl patch added: orphans %v", pattern, got.Orphans)
		}
		if got := an.WithoutDeclared("kubectl-client-side-apply", []Declared{{Pattern: p, Manager: "kubectl-patch"}}); len(got.Orphans) != 1 {
			t.Errorf("%s owned by kubectl-patch hid the container whose image kubectl set wrote: orphans %v", pattern, got.Orphans)
		}
	}
}
