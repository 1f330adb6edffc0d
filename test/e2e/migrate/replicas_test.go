package migrate_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The documented hand-over of replicas: the manifest drops replicas, and
// set-last-applied removes it from last-applied before the next apply,
// so that kubectl scale (or an autoscaler) owns it. managedFields still
// give spec.replicas to kubectl-client-side-apply when the scale keeps
// the value (an Update moves ownership only when the value changes). The
// migration moves only what last-applied has or the server defaulted, so
// replicas stays with client-side apply, and the new manager's apply
// without it leaves the scale's 4.
func TestMigrationLeavesHandedOverReplicas(t *testing.T) {
	f := framework.New(t)
	f.Kubectl.Run(t, "apply", "-f", "testdata/scaled-v1.yaml").MustSucceed(t)
	f.Kubectl.Run(t, "apply", "set-last-applied", "-f", "testdata/scaled-v2.yaml").MustSucceed(t)
	f.Kubectl.Run(t, "scale", "deployment/web", "--replicas=4").MustSucceed(t)
	res := f.Hygiene(t, "migrate", "--server-side", "-n", f.Namespace, "--field-manager", gitOpsManager)
	if res.ExitCode != 0 {
		t.Fatalf("migrate exited %d:\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	framework.WantLines(t, res.Stderr)
	framework.WantLines(t, res.Stdout,
		"Deployment "+f.Namespace+"/web: client-side apply by kubectl, kubectl-client-side-apply",
		"  fields it owns, which a server-side apply that drops them leaves behind unless upgraded:",
		"    spec.selector",
		"    spec.template.metadata.labels.app",
		"    spec.template.spec.containers[name=nginx].image",
		"    spec.template.spec.containers[name=nginx].name",
		"  and 14 field(s) the server defaulted (a manifest that leaves them out gets the default again; -o json lists them)",
		"  fields that stay with client-side apply, as neither last-applied nor the server's defaults have them (the new manager's apply would delete them):",
		"    spec.replicas",
		fmt.Sprintf(upgradedLine, gitOpsManager),
		keptLine(f.Namespace),
		"1 object(s) upgraded, 0 with nothing to upgrade, 0 failed.")
	clientGoApply(t, f, "testdata/scaled-v2.yaml", gitOpsManager)
	d, err := f.Client.AppsV1().Deployments(f.Namespace).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := *d.Spec.Replicas; got != 4 {
		t.Errorf("replicas after %s's apply without replicas = %d, want 4 (the scale's)", gitOpsManager, got)
	}
	if diff := cmp.Diff([]string{"kubectl-client-side-apply Update", "kubectl-last-applied Apply", gitOpsManager + " Apply"}, stateOf(t, f).Managers); diff != "" {
		t.Errorf("managers after the apply (-want +got):\n%s", diff)
	}
}
