package audit_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const seeds = "../seeds/testdata/"

// The fields the tests read (with kubectl's JSONPath) and the paths the
// findings name.
const (
	lastAppliedPath = "metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]"
	lastAppliedExpr = `{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`
	restartedAtPath = "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]"
	restartedAtExpr = `{.spec.template.metadata.annotations.kubectl\.kubernetes\.io/restartedAt}`
	imagePath       = "spec.template.spec.containers[name=nginx].image"
	// envExpr is Deployment web's env, which kubectl set env changes.
	envExpr = "{.spec.template.spec.containers[0].env}"
	sts     = "statefulset.apps/my-wonderhoy-app"
)

// cleanObjects writes n Deployments and n StatefulSets, with no replicas,
// as one multi-document file.
func cleanObjects(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		for _, kind := range []string{"Deployment", "StatefulSet"} {
			name := fmt.Sprintf("clean-%s-%03d", strings.ToLower(kind), i)
			service := ""
			if kind == "StatefulSet" {
				service = "  serviceName: " + name + "\n"
			}
			fmt.Fprintf(&b, `---
apiVersion: apps/v1
kind: %s
metadata:
  name: %s
  labels:
    app: %s
spec:
%s  replicas: 0
  selector:
    matchLabels:
      app: %s
  template:
    metadata:
      labels:
        app: %s
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.2
        env:
        - name: INDEX
          value: "%d"
`, kind, name, name, service, name, name, i)
		}
	}
	path := filepath.Join(t.TempDir(), "clean.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
