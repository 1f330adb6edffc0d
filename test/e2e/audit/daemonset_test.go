package audit_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The API server accepts a DaemonSet's rollingUpdate under OnDelete, and
// keeps a value that is not its default: defaulted-dependent, which
// removes a StatefulSet's or Deployment's rejected sibling, removes a
// DaemonSet's only when it is all server defaults (merge's
// daemonset-ondelete-set-by-hand fixture).
func TestAPIServerAcceptsADaemonSetsRollingUpdateUnderOnDelete(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	framework.WantLines(t, k.Run(t, "apply", "-f", "testdata/daemonset-ondelete.yaml").MustSucceed(t).Stdout, "daemonset.apps/agent created")
	framework.WantLines(t, k.JSONPath(t, "daemonset/agent", "{.spec.updateStrategy}"), `{"rollingUpdate":{"maxSurge":0,"maxUnavailable":3},"type":"OnDelete"}`)
}
