package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// A key applied through stringData lives in data: it is no orphan, and an
// unchanged one is no drift (the reliability e2e caught the first).
func TestStringDataIsOwnedAsData(t *testing.T) {
	la := `{"apiVersion":"v1","kind":"Secret","metadata":{"annotations":{},"name":"canary","namespace":"ns"},"stringData":{"password":"password-1","token":"token-1"},"type":"Opaque"}`
	live := mustObject(t, `
apiVersion: v1
kind: Secret
metadata:
  name: canary
  namespace: ns
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '`+la+`'
data:
  password: cGFzc3dvcmQtMQ==
  token: dG9rZW4tMQ==
type: Opaque
`)
	manifest := mustObject(t, `
apiVersion: v1
kind: Secret
metadata:
  name: canary
  namespace: ns
stringData:
  password: password-2
  token: token-1
type: Opaque
`)
	_, an, err := NewAnalyzer().AnalyzeApply(live, manifest)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]FieldFact{}, an.Orphans); diff != "" {
		t.Errorf("orphans (-want +got):\n%s", diff)
	}
	lv, err := NewAnalyzer().AnalyzeLive(live)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]FieldFact{}, lv.Drift); diff != "" {
		t.Errorf("drift (-want +got):\n%s", diff)
	}
}

func mustObject(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}
