package seeds_test

import (
	"regexp"
	"slices"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Seed 003: the restartedAt annotation that kubectl rollout restart adds to
// the pod template is never removed by apply, because last-applied never
// had it.
func TestSeed003RolloutRestartAnnotationSurvivesApply(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	const deploy = "deployment.apps/nginx-deployment"
	const annotations = "jsonpath={.spec.template.metadata.annotations}"

	framework.WantLines(t, k.Run(t, "apply", "-f", "testdata/seed003-v1.yaml").MustSucceed(t).Stdout, deploy+" created")
	framework.WantLines(t, k.Run(t, "rollout", "restart", deploy).MustSucceed(t).Stdout, deploy+" restarted")
	restarted := k.Run(t, "get", deploy, "-o", annotations).MustSucceed(t).Stdout
	restartedAt := regexp.MustCompile(`^\{"kubectl.kubernetes.io/restartedAt":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[^"]*"\}$`)
	if !restartedAt.MatchString(restarted) {
		t.Fatalf("pod template annotations after restart = %q, want only kubectl.kubernetes.io/restartedAt", restarted)
	}

	framework.WantLines(t, k.Run(t, "apply", "-f", "testdata/seed003-v2.yaml").MustSucceed(t).Stdout, deploy+" configured")
	after := k.Run(t, "get", deploy, "-o", annotations).MustSucceed(t).Stdout
	if after != restarted {
		t.Errorf("pod template annotations after apply = %q, want the restart's %q kept", after, restarted)
	}
	image := k.Run(t, "get", deploy, "-o", "jsonpath={.spec.template.spec.containers[0].image}").MustSucceed(t)
	framework.WantLines(t, image.Stdout, "nginx:1.16.1")

	// The field manager that owns it is kubectl-rollout, which is what the
	// webhook later names.
	owner := k.Run(t, "get", deploy, "--show-managed-fields", "-o",
		`jsonpath={range .metadata.managedFields[*]}{.manager} {.operation} {.fieldsV1.f:spec.f:template.f:metadata.f:annotations}{"\n"}{end}`).MustSucceed(t)
	if !slices.Contains(owner.StdoutLines(), `kubectl-rollout Update {".":{},"f:kubectl.kubernetes.io/restartedAt":{}}`) {
		t.Errorf("managed fields = %q, want kubectl-rollout (Update) owning restartedAt", owner.Stdout)
	}
}
