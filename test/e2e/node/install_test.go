package node_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// helm install as docs/install.md says brings up every replica Ready
// through its probes, on the node, from the image of make image; a start
// is quiet: no Warning event (before the startup probe, every start made
// a "Readiness probe failed: … connection refused" one).
func TestInstallAsTheDocsSayRunsReadyPods(t *testing.T) {
	admin := installed(t)
	got := admin.Run(t, "get", "pods", "-l", "app.kubernetes.io/name=apply-hygiene", "-o",
		`jsonpath={range .items[*]}{.spec.nodeName} {.spec.containers[0].image} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}`).MustSucceed(t)
	framework.WantLines(t, got.Stdout,
		"apply-hygiene-node ghcr.io/apply-hygiene/apply-hygiene:0.1.0 True",
		"apply-hygiene-node ghcr.io/apply-hygiene/apply-hygiene:0.1.0 True")
	events := admin.Run(t, "get", "events", "--field-selector=type=Warning").MustSucceed(t)
	framework.WantLines(t, events.Stdout)
	framework.WantLines(t, events.Stderr, "No resources found in apply-hygiene namespace.")
}
