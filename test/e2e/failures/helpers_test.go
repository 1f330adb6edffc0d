package failures_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// newWeb creates deployment/web (3 replicas, owned by its last-applied)
// in a new namespace.
func newWeb(t *testing.T) *framework.Framework {
	t.Helper()
	f := framework.New(t)
	f.Kubectl.Run(t, "apply", "-f", "testdata/web.yaml").MustSucceed(t)
	return f
}

// scaleDenied is what kubectl scale deployment/web --replicas=n prints
// when apply-hygiene reviews it: the [imperative-edit] denial.
func scaleDenied(ns string, n int) string {
	return fmt.Sprintf(`Error from server (Forbidden): `+framework.DeniedPrefix+
		`[imperative-edit] Deployment %[1]s/web: this write by apply-hygiene-admin changes fields that last-applied owns: `+
		`spec.replicas (last-applied 3, now %[2]d); the next kubectl apply puts the last-applied values back without a word. `+
		`Put the change in your manifest and run kubectl apply, or hand a field over to its new writer by deleting it from `+
		`last-applied first with: kubectl hygiene handover deployments.apps/web -n %[1]s spec.replicas`, ns, n)
}

// scale runs kubectl scale deployment/web --replicas=n.
func scale(t *testing.T, f *framework.Framework, n int) framework.Result {
	t.Helper()
	return f.Kubectl.Run(t, "scale", "deployment/web", "--replicas="+strconv.Itoa(n))
}

// wantReviewed checks that apply-hygiene reviews deployment/web: kubectl
// scale to n is denied and the replicas stay at replicas.
func wantReviewed(t *testing.T, f *framework.Framework, n, replicas int) {
	t.Helper()
	res := scale(t, f, n).MustFail(t)
	framework.WantLines(t, res.Stdout)
	framework.WantLines(t, res.Stderr, scaleDenied(f.Namespace, n))
	wantReplicas(t, f, replicas)
}

// wantReplicas checks deployment/web's spec.replicas.
func wantReplicas(t *testing.T, f *framework.Framework, n int) {
	t.Helper()
	if got := f.Kubectl.JSONPath(t, "deployment/web", "{.spec.replicas}"); got != strconv.Itoa(n) {
		t.Errorf("deployment/web spec.replicas = %s, want %d", got, n)
	}
}

// withServer stops the package's server and starts a second one from the
// same binary, with the chart values, TLS mode and extra flags of opts,
// reaching the API server through the same proxy, until the test ends;
// then the package's server is installed and started again.
func withServer(t *testing.T, opts devenv.Options) *devenv.Webhook {
	t.Helper()
	w, cp := framework.Webhook(t), framework.ControlPlane(t)
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Stop(); err != nil {
		t.Fatalf("stopping the package's server: %v", err)
	}
	opts.RepoRoot = root
	opts.BinDir = filepath.Dir(framework.KubectlPath())
	opts.Dir = t.TempDir()
	opts.Binary = w.Binary
	opts.ServerArgs = append([]string{"--shadow-verify", fastStop}, opts.ServerArgs...)
	opts.APIServer = func(string) (string, error) { return apiServer.URL(), nil }
	other, err := devenv.Start(t.Context(), cp, opts)
	t.Cleanup(func() {
		if other != nil {
			if err := other.Close(); err != nil {
				t.Errorf("stopping the second server: %v", err)
			}
		}
		if err := w.Reconfigure(context.Background(), cp); err != nil {
			t.Errorf("restoring the package's server: %v", err)
		}
	})
	if err != nil {
		t.Fatalf("starting a second server (values %v): %v", opts.Values, err)
	}
	return other
}
