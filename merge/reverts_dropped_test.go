package merge

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// An apply whose manifest drops a container's env list that the previous
// last-applied had (Argo CD applied it client-side) deletes the list whole:
// a variable a person added since with kubectl set env goes with it, and
// that is a revert (generative seed 205623, sequence 010).
func TestApplyThatDropsAListRevertsWhatAPersonAddedInIt(t *testing.T) {
	tmpl := func(env []any) map[string]any {
		c := map[string]any{"name": "nginx", "image": "nginx:1"}
		if env != nil {
			c["env"] = env
		}
		return map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}}, "spec": map[string]any{"containers": []any{c}}}
	}
	manifestOf := func(env []any) string {
		b, _ := json.Marshal(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "demo"},
			"spec": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}, "template": tmpl(env)}})
		return string(b)
	}
	entry := func(m string, f map[string]any) map[string]any {
		return map[string]any{"apiVersion": "apps/v1", "fieldsType": "FieldsV1", "manager": m, "operation": "Update", "time": "2026-11-26T10:00:00Z", "fieldsV1": f}
	}
	la := map[string]any{"f:metadata": map[string]any{"f:annotations": map[string]any{".": map[string]any{}, "f:kubectl.kubernetes.io/last-applied-configuration": map[string]any{}}}}
	mk := func(env []any, lastApplied string, mfs []any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": "demo", "uid": "u", "annotations": map[string]any{LastAppliedAnnotation: lastApplied}, "managedFields": mfs},
			"spec":     map[string]any{"replicas": int64(1), "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}, "template": tmpl(env)}}}
	}
	old := mk([]any{map[string]any{"name": "GEN_MANIFEST_2", "value": "11"}, map[string]any{"name": "GEN_SET_13", "value": "1"}},
		manifestOf([]any{map[string]any{"name": "GEN_MANIFEST_2", "value": "11"}}), []any{
			entry("argocd-controller", la),
			entry("kubectl-set", map[string]any{"f:spec": map[string]any{"f:template": map[string]any{"f:spec": map[string]any{"f:containers": map[string]any{`k:{"name":"nginx"}`: map[string]any{"f:env": map[string]any{`k:{"name":"GEN_SET_13"}`: map[string]any{".": map[string]any{}, "f:name": map[string]any{}, "f:value": map[string]any{}}}}}}}}}),
		})
	nw := mk(nil, manifestOf(nil), []any{entry("kubectl-client-side-apply", la)})
	an, err := NewAnalyzer().AnalyzeClientSideApply(old, nw)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"spec.template.spec.containers[name=nginx].env[name=GEN_SET_13]"}, paths(an.Reverts)); diff != "" {
		t.Errorf("reverts (-want +got):\n%s", diff)
	}
}
