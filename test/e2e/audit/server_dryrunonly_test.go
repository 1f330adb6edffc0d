package audit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// With removalProofs on and audit.fix off, the chart grants its service
// account patch on the reviewed kinds for the removal proofs' dry runs,
// and its ValidatingAdmissionPolicy makes that patch dry-run-only: with
// the service account's own token (the chart's RBAC, nothing added), a
// server-side dry-run patch of a Deployment passes, the same patch for
// real is denied by the policy, and the Deployment is unchanged.
func testRemovalProofsPatchIsDryRunOnly(t *testing.T) {
	f := framework.New(t)
	f.Kubectl.Run(t, "apply", "-f", "testdata/web.yaml").MustSucceed(t)
	webhook := f.KubectlWithTokenOf(t, devenv.Namespace, devenv.Release)
	patch := []string{"patch", "deployment/web", "--type=merge", "-p", `{"spec":{"minReadySeconds":5}}`, "--field-manager=apply-hygiene-dry-run"}

	dry := webhook.Run(t, append(patch, "--dry-run=server")...)
	dry.MustSucceed(t)
	if got, want := dry.Stdout, "deployment.apps/web patched\n"; got != want {
		t.Errorf("dry-run patch printed %q, want %q", got, want)
	}
	if got := f.Kubectl.JSONPath(t, "deployment/web", "{.spec.minReadySeconds}"); got != "" {
		t.Errorf("minReadySeconds = %q after the dry-run patch, want unset", got)
	}

	// The API server enforces a ValidatingAdmissionPolicy some moments
	// after it is created (its informer compiles it): until then a real
	// patch passes. Wait on a throwaway Deployment, not on web.
	f.Kubectl.Run(t, "create", "deployment", "probe", "--image=registry.k8s.io/pause:3.10").MustSucceed(t)
	probe := 0
	framework.Eventually(t, 30*time.Second, "the dry-run-only policy to be enforced", func(context.Context) (bool, error) {
		probe++
		res := webhook.Run(t, "patch", "deployment/probe", "--type=merge", "-p", fmt.Sprintf(`{"spec":{"minReadySeconds":%d}}`, probe))
		return res.ExitCode != 0 && strings.Contains(res.Stderr, "apply-hygiene-dry-run-only"), nil
	})

	real := webhook.Run(t, patch...).MustFail(t)
	want := `Error from server (Forbidden): deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'apply-hygiene-dry-run-only' with binding 'apply-hygiene-dry-run-only' denied request: apply-hygiene's service account may write the reviewed kinds only as a server-side dry run (removalProofs)` + "\n"
	if real.Stderr != want {
		t.Errorf("real patch printed %q, want %q", real.Stderr, want)
	}
	if got := f.Kubectl.JSONPath(t, "deployment/web", "{.spec.minReadySeconds}"); got != "" {
		t.Errorf("minReadySeconds = %q after the denied patch, want unset", got)
	}
}
