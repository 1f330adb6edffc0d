package node_test

import (
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// helm install as docs/install.md says brings up every replica Ready
// through its probes, on the node, from the image of make image; a start
// is quiet: no readiness or liveness probe failed (before the startup
// probe, every start made a "Readiness probe failed: … connection
// refused" Warning). A startup probe's failure on a slow start is the
// chart's design: it gives the start a minute.
func TestInstallAsTheDocsSayRunsReadyPods(t *testing.T) {
	admin := installed(t)
	got := admin.Run(t, "get", "pods", "-l", "app.kubernetes.io/name=apply-hygiene", "-o",
		`jsonpath={range .items[*]}{.spec.nodeName} {.spec.containers[0].image} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}`).MustSucceed(t)
	framework.WantLines(t, got.Stdout,
		"apply-hygiene-node ghcr.io/apply-hygiene/apply-hygiene:0.1.0 True",
		"apply-hygiene-node ghcr.io/apply-hygiene/apply-hygiene:0.1.0 True")
	events := admin.Run(t, "get", "events", "--field-selector=type=Warning", "-o",
		`jsonpath={range .items[*]}{.involvedObject.name} {.reason}: {.message}{"\n"}{end}`).MustSucceed(t)
	for _, line := range events.StdoutLines() {
		if strings.Contains(line, " Unhealthy: Readiness probe failed") || strings.Contains(line, " Unhealthy: Liveness probe failed") {
			t.Errorf("a Warning event on a normal start: %s", line)
		}
	}
}
