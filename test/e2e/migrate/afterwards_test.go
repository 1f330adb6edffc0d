package migrate_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// After kubectl hygiene migrate, kubectl's server-side Apply entry owns
// the fields of last-applied and the server's defaults, and while the
// object keeps last-applied that is what kubectl applies (the API server
// writes a server-side apply by kubectl into it). A person's write is
// reported for what kubectl's next apply really puts back, never for a
// default the migration handed over or an annotation that last-applied's
// empty annotations map never held (generative soak seed 271126,
// sequences 030 and 056: false [server-side-owned] warnings).
func TestWritesAfterMigrationNameOnlyAppliedFields(t *testing.T) {
	migrated := func(t *testing.T, flags ...string) *framework.Framework {
		t.Helper()
		f := framework.New(t)
		f.Kubectl.Run(t, "apply", "-f", "testdata/migrated-v1.yaml").MustSucceed(t)
		res := f.Hygiene(t, append([]string{"migrate", "--server-side", "-n", f.Namespace}, flags...)...)
		if res.ExitCode != 0 {
			t.Fatalf("migrate exited %d:\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
		}
		return f
	}

	// kubectl set serviceaccount writes serviceAccountName; the API
	// server copies it into the deprecated serviceAccount, which the
	// migration handed to the applier as a default.
	for name, flags := range map[string][]string{
		"kubectl set serviceaccount is reported at serviceAccountName alone":                                   nil,
		"migrated to kustomize-controller, kubectl set serviceaccount is reported at serviceAccountName alone": {"--field-manager", "kustomize-controller"},
	} {
		t.Run(name, func(t *testing.T) {
			f := migrated(t, flags...)
			set := f.Kubectl.Run(t, "set", "serviceaccount", "deployment/web", "other")
			framework.WantLines(t, set.Stdout)
			framework.WantLines(t, set.Stderr,
				`error: failed to patch ServiceAccountName admission webhook "validate.apply-hygiene.io" denied the request: `+
					"[imperative-edit] Deployment "+f.Namespace+"/web: this write by apply-hygiene-admin (field manager kubectl-set) changes fields that last-applied owns: "+
					`spec.template.spec.serviceAccountName (last-applied "web", now "other"); the next kubectl apply puts the last-applied values back without a word. `+
					"Put the change in your manifest and run kubectl apply, or hand a field over to its new writer by deleting it from last-applied first with: "+
					"kubectl hygiene handover deployments.apps/web -n "+f.Namespace+" spec.template.spec.serviceAccountName")
		})
	}

	t.Run("kubectl replace is not reported at annotations or defaults kubectl never applied", func(t *testing.T) {
		f := migrated(t)
		k := f.Kubectl
		k.Run(t, "apply", "-f", "testdata/migrated-v2.yaml").MustSucceed(t)
		k.Run(t, "annotate", "deployment/web", "team=payments").MustSucceed(t)
		// The replace drops last-applied and the annotation, and the
		// server defaults the pull policy for the tagged image.
		replace := k.Run(t, "replace", "-f", "testdata/migrated-v2.yaml").MustSucceed(t)
		framework.WantLines(t, replace.Stdout, "deployment.apps/web replaced")
		framework.WantLines(t, replace.Stderr)
		framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.template.spec.containers[0].imagePullPolicy}"), "IfNotPresent")
	})
}
