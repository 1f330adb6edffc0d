package node_test

import (
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The tests here run last in the package (files in name order): helm
// test, then helm uninstall.

// helm test --logs runs the chart's test Pod from the helm test image of
// make image on the node, and it passes: the webhook answered its dry-run
// imperative edit through the Service. It exits 0 and prints the Pod's
// log (the Pod used to be deleted before Helm read it: exit 1, "unable to
// get pod logs").
func TestHelmTestPasses(t *testing.T) {
	installed(t)
	out, code := helm(t, "test", release, "--namespace", namespace, "--logs")
	if code != 0 {
		t.Fatalf("helm test exited %d:\n%s", code, out)
	}
	// Helm lists every hook resource as a test suite (issue 27); each
	// one, the Pod included, must have succeeded.
	phases := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Phase:") {
			phases++
			if strings.Join(strings.Fields(line), " ") != "Phase: Succeeded" {
				t.Errorf("helm test: %q, want Phase: Succeeded", line)
			}
		}
	}
	if phases == 0 {
		t.Errorf("helm test printed no Phase:\n%s", out)
	}
	_, podLog, ok := strings.Cut(out, "POD LOGS: apply-hygiene-test\n")
	if !ok {
		t.Fatalf("helm test --logs printed no POD LOGS: apply-hygiene-test:\n%s", out)
	}
	framework.WantMatch(t, strings.TrimSpace(podLog),
		`Warning: \[imperative-edit\] Deployment apply-hygiene-test/apply-hygiene-test: this write by system:serviceaccount:apply-hygiene:apply-hygiene-test .*`,
		`deployment\.apps/apply-hygiene-test image updated \(server dry run\)`,
		`PASS: the webhook warned about the imperative edit`)
}

// helm uninstall removes the webhook configurations and everything else
// the chart made; only the Secret of self-managed TLS stays, as
// docs/install.md says.
func TestHelmUninstallLeavesOnlyTheTLSSecret(t *testing.T) {
	admin := installed(t)
	if out, code := helm(t, "uninstall", release, "--namespace", namespace, "--wait"); code != 0 {
		t.Fatalf("helm uninstall exited %d:\n%s", code, out)
	}
	// The garbage collector deletes the Pods after their Deployment;
	// each takes its shutdown delay.
	admin.Run(t, "wait", "--for=delete", "pods", "-l", "app.kubernetes.io/instance="+release, "--timeout=90s").MustSucceed(t)
	clusterWide := admin.Run(t, "get", "mutatingwebhookconfigurations,validatingwebhookconfigurations,clusterroles,clusterrolebindings",
		"-l", "app.kubernetes.io/instance="+release, "-o", "name").MustSucceed(t)
	framework.WantLines(t, clusterWide.Stdout)
	left := admin.Run(t, "get", "all,configmaps,secrets,serviceaccounts,roles,rolebindings,leases,poddisruptionbudgets", "-o", "name").MustSucceed(t)
	framework.WantLines(t, left.Stdout,
		"configmap/kube-root-ca.crt",
		"secret/apply-hygiene-tls",
		"serviceaccount/default")
}
