package auditverb

import (
	"encoding/base64"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// audit --fix=dry-run's diff of a Secret shows its keys, never their
// values: the object's YAML goes through merge's redaction.
func TestShownYAMLRedactsASecret(t *testing.T) {
	const value = "canary-password-31415"
	encoded := base64.StdEncoding.EncodeToString([]byte(value))
	secret := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "namespace": "shop", "annotations": map[string]any{
			"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"password":"` + encoded + `"}}`,
			"note": "kept",
		}},
		"data":       map[string]any{"password": encoded},
		"stringData": map[string]any{"token": value},
	}}
	got := shownYAML(secret)
	want := `apiVersion: v1
data:
  password: <redacted>
kind: Secret
metadata:
  annotations:
    note: kept
  name: db
  namespace: shop
stringData:
  token: <redacted>
`
	if got != want {
		t.Errorf("shownYAML of a Secret:\n%s\nwant:\n%s", got, want)
	}
	for _, form := range []string{value, encoded} {
		if strings.Contains(got, form) {
			t.Errorf("shownYAML of a Secret holds %q", form)
		}
	}
	if secret.Object["data"].(map[string]any)["password"] != encoded {
		t.Error("shownYAML changed the Secret it was given")
	}
}
