package policy_test

import (
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// A CI robot that is not a service account sets an image with its own
// field manager: with policy.exemptions.fieldManagers={ci-deployer} it
// passes without a word, while the same change under kubectl's default
// manager (kubectl-set) is still denied.
func TestWriteByExemptFieldManagerIsAllowed(t *testing.T) {
	framework.Reconfigure(t, "policy.exemptions.fieldManagers={ci-deployer}")
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/web-v1.yaml").MustSucceed(t)

	denied := k.Run(t, "set", "image", "deployment/web", "nginx=nginx:1.16.1").MustFail(t)
	if !strings.Contains(denied.Stderr, "[imperative-edit] Deployment "+f.Namespace+"/web: ") {
		t.Fatalf("kubectl set image under kubectl-set: want an [imperative-edit] denial, got:\n%s", denied.Stderr)
	}

	set := k.Run(t, "set", "image", "deployment/web", "nginx=nginx:1.16.1", "--field-manager=ci-deployer").MustSucceed(t)
	framework.WantLines(t, set.Stdout, "deployment.apps/web image updated")
	framework.WantLines(t, set.Stderr)
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.template.spec.containers[0].image}"), "nginx:1.16.1")
}
