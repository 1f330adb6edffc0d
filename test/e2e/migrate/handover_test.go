package migrate_test

import (
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// A Deployment, a ConfigMap and a Secret applied client-side, then
// drifted: a robot (a service account, warned) changed a field
// last-applied owns and a person added a label no manifest has (a real
// orphan, which the next apply reports). migrate's write rewrites nothing
// but metadata.managedFields, moving client-side apply's fields to an
// Apply entry as kubectl's csaupgrade does: it applies no manifest and
// moves no field, so apply-hygiene says nothing on it, for the default
// manager and for another one. Before, the webhook reviewed it as a
// server-side apply of the Apply entry's fields and warned orphaned-field
// for the robot's value (which last-applied has) and for the label.
func TestMigrationOfDriftedObjectsIsSilent(t *testing.T) {
	for name, manager := range map[string]string{
		"migrate to kubectl":              "",
		"migrate to kustomize-controller": gitOpsManager,
	} {
		t.Run(name, func(t *testing.T) {
			f := framework.New(t)
			k := f.Kubectl
			k.Run(t, "apply", "-f", v1, "-f", "testdata/drifted.yaml").MustSucceed(t)
			robot := f.KubectlAsServiceAccount(t, "deployer")
			for _, edit := range [][]string{
				{"set", "image", "deployment/web", "nginx=nginx:1.99"},
				{"patch", "configmap/settings", "-p", `{"data":{"token":"from-the-robot"}}`},
				{"patch", "secret/credentials", "-p", `{"data":{"token":"ZnJvbS10aGUtcm9ib3Q="}}`},
			} {
				res := robot.Run(t, edit...).MustSucceed(t)
				framework.WantMatch(t, res.Stderr, `Warning: \[imperative-edit\] .*`)
			}
			for _, obj := range []string{"deployment/web", "configmap/settings", "secret/credentials"} {
				k.Run(t, "label", obj, "extra=1").MustSucceed(t)
			}

			args := []string{"migrate", "--server-side", "-n", f.Namespace, "--kind", "configmaps,secrets"}
			if manager != "" {
				args = append(args, "--field-manager", manager)
			}
			res := f.Hygiene(t, args...)
			if res.ExitCode != 0 {
				t.Fatalf("migrate exited %d:\n%s", res.ExitCode, res.Stderr)
			}
			// Nothing on stderr: no warning of apply-hygiene on the writes.
			framework.WantLines(t, res.Stderr)
			out := res.StdoutLines()
			if len(out) == 0 || out[len(out)-1] != "3 object(s) upgraded, 0 with nothing to upgrade, 0 failed." {
				t.Errorf("migrate's summary: want 3 object(s) upgraded, got:\n%s", strings.Join(out, "\n"))
			}
		})
	}
}
