package diff

import (
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/clitest"
)

// diff predicts nothing of apply-hygiene's for an apply that the
// installed webhooks are not sent (here: a namespace labelled out of
// their namespaceSelector), and says so on stderr: kubectl apply will
// print none of it, and a configured denial does not fail the diff.
func TestDiffPredictsNothingOutsideTheWebhooksScope(t *testing.T) {
	const note = "note: Deployment shop/web: validatingwebhookconfiguration apply-hygiene does not send its UPDATE to apply-hygiene " +
		"(rules, namespaceSelector, objectSelector), so kubectl apply prints nothing of apply-hygiene's for it\n"
	tests := map[string]struct {
		files    []string
		manifest string
		code     int
		findings bool
	}{
		"in the scope: denied": {
			files: []string{"testdata/cluster/deployment-edited.yaml", "testdata/scope/validating-workloads.yaml"},
			code:  cli.ExitFailure, findings: true,
		},
		"the namespace labelled apply-hygiene.io/ignore: nothing": {
			files: []string{"testdata/cluster/deployment-edited.yaml", "testdata/scope/validating-workloads.yaml", "testdata/scope/namespace-shop-ignored.yaml"},
			code:  cli.ExitOK,
		},
		"the same apply drops the namespace's label: denied": {
			files:    []string{"testdata/cluster/deployment-edited.yaml", "testdata/scope/validating-workloads.yaml", "testdata/scope/namespace-shop-ignored.yaml"},
			manifest: "testdata/scope/shop-and-web.yaml",
			code:     cli.ExitFailure, findings: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			manifest := tc.manifest
			if manifest == "" {
				manifest = "testdata/diff/web-v1.yaml"
			}
			args := []string{"-f", manifest, "-o", "json", "--policy-config", "testdata/diff/deny-reverts.yaml"}
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			code := execute(t, streams, args, clitest.FakeCluster(t, tc.files...))
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, errOut.String())
			}
			if noted := strings.Contains(errOut.String(), note); noted == tc.findings {
				t.Errorf("stderr notes the scope: %v, want %v:\n%s", noted, !tc.findings, errOut.String())
			}
			if found := strings.Contains(out.String(), `"rule": "apply-reverts-drift"`); found != tc.findings {
				t.Errorf("apply-reverts-drift finding: %v, want %v:\n%s", found, tc.findings, out.String())
			}
		})
	}
}
