package policy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// workload is the manifest of a Deployment or StatefulSet name running
// nginx, with extra lines under spec (indented by the caller as under
// spec) and under metadata.
func workload(kind, name string, spec, metadata []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: apps/v1\nkind: %s\nmetadata:\n  name: %s\n  labels: {app: %s}\n", kind, name, name)
	for _, l := range metadata {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString("spec:\n")
	for _, l := range spec {
		b.WriteString("  " + l + "\n")
	}
	if kind == "StatefulSet" {
		fmt.Fprintf(&b, "  serviceName: %s\n", name)
	}
	fmt.Fprintf(&b, "  selector: {matchLabels: {app: %s}}\n  template:\n    metadata: {labels: {app: %s}}\n"+
		"    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.27\n", name, name)
	return b.String()
}

// applyManifest applies manifest from stdin and returns the result.
func applyManifest(t *testing.T, k framework.Kubectl, manifest string) framework.Result {
	t.Helper()
	return k.RunWithInput(t, manifest, "apply", "-f", "-")
}
