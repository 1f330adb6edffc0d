package webhook_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// kubectl's patch merges a container's ports by containerPort alone, while
// field sets key them by containerPort and protocol. Changing port 53 from
// TCP to UDP therefore changes no field that the next apply puts back
// (kubectl's patch for it is {} and UDP stays): the edit is allowed without
// a word, and so is the apply.
func TestEditOfAPortProtocolIsNotDenied(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	framework.ApplyPredicted(t, k, "testdata/dns.yaml").MustSucceed(t)

	patch := k.Run(t, "patch", "deployment/dns", "-p",
		`{"spec":{"template":{"spec":{"containers":[{"name":"dns","ports":[{"containerPort":53,"protocol":"UDP"}]}]}}}}`).MustSucceed(t)
	framework.WantLines(t, patch.Stdout, "deployment.apps/dns patched")
	framework.WantLines(t, patch.Stderr)

	apply := framework.ApplyPredicted(t, k, "testdata/dns.yaml").MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/dns unchanged")
	framework.WantLines(t, apply.Stderr)
	if got := k.JSONPath(t, "deployment/dns", "{.spec.template.spec.containers[0].ports[0].protocol}"); got != "UDP" {
		t.Errorf("protocol after the apply = %q, want UDP (kubectl's patch leaves it)", got)
	}
}
