package chart_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// serviceMonitorCRDModule holds the Prometheus Operator's ServiceMonitor
// and PrometheusRule CRDs (only the full scenario renders them).
const serviceMonitorCRDModule = "github.com/prometheus-operator/prometheus-operator@v0.85.0"

// TestManifestsAcceptedByAPIServer dry-runs every rendered manifest of
// every scenario on a real API server: schema validation, defaulting and
// admission of the real thing, not a linter's model of it.
func TestManifestsAcceptedByAPIServer(t *testing.T) {
	kubectl := tool(t, "kubectl")
	binDir := controlplane.RequireTools(t, controlplane.Binaries...)
	cp, err := controlplane.Start(t.Context(), controlplane.Options{BinDir: binDir, Controllers: []string{"serviceaccount-controller"}})
	if err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	run := func(t *testing.T, stdin string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), kubectl, append([]string{"--kubeconfig", cp.KubeconfigPath()}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		cmd.Stdin = strings.NewReader(stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}

	// cert-manager's own CRDs, from the module go.mod pins.
	certManagerCRDs := filepath.Join(moduleDir(t, "github.com/cert-manager/cert-manager"), "deploy", "crds")
	run(t, "", "apply", "--server-side", "-f", certManagerCRDs)
	smDir, smErr := moduleDirOrError(t, serviceMonitorCRDModule)
	if smErr == nil {
		for _, crd := range []string{"monitoring.coreos.com_servicemonitors.yaml", "monitoring.coreos.com_prometheusrules.yaml"} {
			run(t, "", "apply", "--server-side", "-f", filepath.Join(smDir, "example", "prometheus-operator-crd", crd))
		}
	}
	run(t, "", "wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
	run(t, "", "create", "namespace", releaseNamespace)
	// The full scenario's dashboard ConfigMap goes where its Grafana
	// sidecar looks (metrics.dashboard.namespace).
	run(t, "", "create", "namespace", "monitoring")
	// The helm test's namespace (templates/test.yaml): a dry run creates
	// nothing, so the objects in it need it to exist. The same for the
	// ServiceAccount its Pod runs as.
	testName := releaseName + "-apply-hygiene-test"
	run(t, "", "create", "namespace", testName, "--save-config")
	run(t, "", "create", "serviceaccount", testName, "--namespace", releaseNamespace, "--save-config")

	for _, scenario := range scenarios {
		t.Run(scenario, func(t *testing.T) {
			manifests := renderWithTests(t, scenario)
			if (strings.Contains(manifests, "kind: ServiceMonitor") || strings.Contains(manifests, "kind: PrometheusRule")) && smErr != nil {
				controlplane.Unavailable(t, "missing the Prometheus Operator's CRDs: "+smErr.Error())
			}
			out := run(t, manifests, "apply", "--dry-run=server", "-f", "-")
			objs := decode(t, manifests)
			accepted := strings.Count(out, "(server dry run)")
			if accepted != len(objs) {
				t.Errorf("the API server accepted %d of %d objects:\n%s", accepted, len(objs), out)
			}
			for _, o := range objs {
				t.Logf("accepted %s %s", o.GetKind(), o.GetName())
			}
		})
	}
}

// moduleDir is the module cache directory of a module: at the version
// go.mod requires, or at the one given after "@".
func moduleDir(t *testing.T, module string) string {
	t.Helper()
	dir, err := moduleDirOrError(t, module)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return dir
}

func moduleDirOrError(t *testing.T, module string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "mod", "download", "-json", module)
	cmd.Dir = repoRoot(t)
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr != nil || info.Dir == "" {
		if err == nil {
			err = jerr
		}
		return "", fmt.Errorf("go mod download %s: %w (%s)", module, err, info.Error)
	}
	return info.Dir, nil
}
