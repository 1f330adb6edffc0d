package chart_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

var update = flag.Bool("update", false, "rewrite the golden files and the README values table")

const (
	releaseName      = "ah"
	releaseNamespace = "apply-hygiene"
)

// scenarios are the directories under testdata: values.yaml in,
// manifests.golden.yaml out.
var scenarios = []string{"default", "cert-manager", "url", "full", "common", "all"}

// repoRoot is the repository root, from this package's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatalf("locating the repository root: %v", err)
	}
	return root
}

func chartDir(t *testing.T) string {
	return filepath.Join(repoRoot(t), "charts", "apply-hygiene")
}

// tool returns the path of a pinned binary, or skips the test naming it
// (fails under APPLY_HYGIENE_E2E=required).
func tool(t *testing.T, name string) string {
	t.Helper()
	return filepath.Join(controlplane.RequireTools(t, name), name)
}

// helm runs the pinned helm and returns its stdout, or its stderr as the
// error.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), tool(t, "helm"), args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), errors.New(strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// render runs helm template for a scenario, plus extra arguments, without
// the helm test: its pod (templates/tests) and what it needs
// (templates/test.yaml: a Deployment, Roles, a ServiceAccount and a
// ConfigMap of its own).
func render(t *testing.T, scenario string, extra ...string) string {
	t.Helper()
	return renderWithTests(t, scenario, append([]string{"--skip-tests", "--set", "test.enabled=false"}, extra...)...)
}

// renderWithTests runs helm template for a scenario, plus extra arguments:
// every manifest, the helm test hooks included.
func renderWithTests(t *testing.T, scenario string, extra ...string) string {
	t.Helper()
	args := append([]string{
		"template", releaseName, chartDir(t),
		"--namespace", releaseNamespace,
		"--values", filepath.Join("testdata", scenario, "values.yaml"),
	}, extra...)
	out, err := helm(t, args...)
	if err != nil {
		t.Fatalf("helm template (%s): %v", scenario, err)
	}
	return out
}

func TestTemplateGolden(t *testing.T) {
	for _, scenario := range scenarios {
		t.Run(scenario, func(t *testing.T) {
			got := renderWithTests(t, scenario)
			golden := filepath.Join("testdata", scenario, "manifests.golden.yaml")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatalf("writing %s: %v", golden, err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("reading %s (regenerate with -update): %v", golden, err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("helm template differs from %s; regenerate with -update if intended (-want +got):\n%s", golden, diff)
			}
		})
	}
}

func TestLint(t *testing.T) {
	for _, scenario := range scenarios {
		t.Run(scenario, func(t *testing.T) {
			out, err := helm(t, "lint", "--strict", chartDir(t), "--namespace", releaseNamespace,
				"--values", filepath.Join("testdata", scenario, "values.yaml"))
			if err != nil {
				t.Fatalf("helm lint --strict: %v\n%s", err, out)
			}
			if strings.Contains(out, "[WARNING]") || strings.Contains(out, "[ERROR]") {
				t.Errorf("helm lint reports problems:\n%s", out)
			}
		})
	}
}

func TestSchemaRejectsBadValues(t *testing.T) {
	tests := map[string]struct {
		set     string
		wantErr string
	}{
		"an unknown failure policy": {
			set: "failurePolicy=Sometimes", wantErr: "/failurePolicy",
		},
		"an unknown rule action": {
			set: "policy.rules.imperative-edit.action=maybe", wantErr: "/policy/rules/imperative-edit/action",
		},
		"a timeout above the API server's limit": {
			set: "timeoutSeconds=31", wantErr: "/timeoutSeconds",
		},
		"an unknown reinvocation policy": {
			set: "reinvocationPolicy=Always", wantErr: "/reinvocationPolicy",
		},
		"a misspelt top-level value": {
			set: "failurePolcy=Fail", wantErr: "failurePolcy",
		},
		"a plain-HTTP webhook URL": {
			set: "webhook.url=http://example.com", wantErr: "/webhook/url",
		},
		"a service account exemption without a namespace": {
			set: "policy.exemptions.serviceAccounts={argocd}", wantErr: "/policy/exemptions/serviceAccounts/0",
		},
		"an empty field manager exemption": {
			set: "policy.exemptions.fieldManagers[0]=", wantErr: "/policy/exemptions/fieldManagers/0",
		},
		"a policy file that is not Rego": {
			set: "policy.extraPolicies.team\\.yaml=x", wantErr: "team.yaml",
		},
		"a cert-manager duration that is not a Go duration": {
			set: "certManager.duration=90d", wantErr: "/certManager/duration",
		},
		"an unknown kinds preset": {
			set: "kinds=everything", wantErr: "/kinds",
		},
		"an extra kind with an unknown scope": {
			set:     "extraKinds[0].group=core,extraKinds[0].version=v1,extraKinds[0].resource=nodes,extraKinds[0].scope=Global",
			wantErr: "/extraKinds/0/scope",
		},
		"a shutdown delay that is not whole seconds": {
			set: "shutdownDelay=1m", wantErr: "/shutdownDelay",
		},
		"no shutdown timeout": {
			set: "shutdownTimeout=0s", wantErr: "/shutdownTimeout",
		},
		"a lease duration that is not a Go duration": {
			set: "audit.leaderElection.leaseDuration=15", wantErr: "/audit/leaderElection/leaseDuration",
		},
		"an extra kind without a resource": {
			set: "extraKinds[0].group=example.com,extraKinds[0].version=v1", wantErr: "resource",
		},
		"an object selector with an unknown operator": {
			set: "webhook.objectSelector.matchExpressions[0].key=a,webhook.objectSelector.matchExpressions[0].operator=Like", wantErr: "/webhook/objectSelector/matchExpressions/0/operator",
		},
		"an extra match condition without an expression": {
			set: "webhook.extraMatchConditions[0].name=mine", wantErr: "expression",
		},
		"an extra match condition whose name is not a qualified name": {
			set: "webhook.extraMatchConditions[0].name=my rule,webhook.extraMatchConditions[0].expression=true", wantErr: "/webhook/extraMatchConditions/0/name",
		},
		"an extra env var without a name": {
			set: "extraEnv[0].value=1", wantErr: "name",
		},
		"a network policy peer that is not one": {
			set: "networkPolicy.webhookFrom[0].ports=443", wantErr: "/networkPolicy/webhookFrom/0",
		},
		"an ownership rule without an owner": {
			set: "policy.ownership[0].kinds={Deployment},policy.ownership[0].paths={spec.replicas}", wantErr: "/policy/ownership/0",
		},
		"an ownership kind written as a resource": {
			set: "policy.ownership[0].kinds={deployments},policy.ownership[0].paths={spec.replicas},policy.ownership[0].owner=cluster", wantErr: "/policy/ownership/0/kinds/0",
		},
		"an Argo CD JSON pointer without its leading slash": {
			set: "policy.ownership[0].argoCD.kind=Deployment,policy.ownership[0].argoCD.jsonPointers={spec/replicas}", wantErr: "/policy/ownership/0/argoCD/jsonPointers/0",
		},
		"an Argo CD jq expression": {
			set: "policy.ownership[0].argoCD.kind=Deployment,policy.ownership[0].argoCD.jqPathExpressions={.spec.replicas}", wantErr: "/policy/ownership/0/argoCD/jqPathExpressions",
		},
		"a Flux annotation selector": {
			set: "policy.ownership[0].flux.paths={/spec/replicas},policy.ownership[0].flux.target.annotationSelector=a=b", wantErr: "annotationSelector",
		},
		"a priority class name that is not a DNS subdomain": {
			set: "priorityClassName=System_Critical", wantErr: "/priorityClassName",
		},
		"a tracing sampling ratio above 1": {
			set: "tracing.samplingRatio=1.5", wantErr: "/tracing/samplingRatio",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := helm(t, "template", releaseName, chartDir(t), "--set", tc.set)
			if err == nil {
				t.Fatalf("helm template --set %s succeeded, want a schema error", tc.set)
			}
			if !strings.Contains(err.Error(), "schema") || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("helm template --set %s: error %q does not name the schema and %q", tc.set, err, tc.wantErr)
			}
		})
	}
}

func TestTemplateRejectsContradictions(t *testing.T) {
	tests := map[string]struct {
		args    []string
		wantErr string
	}{
		"URL mode with cert-manager": {
			args:    []string{"--set", "webhook.url=https://127.0.0.1:9443,certManager.enabled=true"},
			wantErr: "exclude each other",
		},
		"a caBundle without a URL": {
			args:    []string{"--set", "webhook.caBundle=Zm9v"},
			wantErr: "only used with webhook.url",
		},
		"an extra match condition with the name of the chart's own": {
			args:    []string{"--set-string", "webhook.extraMatchConditions[0].name=not-a-controller,webhook.extraMatchConditions[0].expression=true"},
			wantErr: `webhook.extraMatchConditions: the name "not-a-controller" is taken`,
		},
		"two extra match conditions with one name": {
			args: []string{"--set-string", "webhook.extraMatchConditions[0].name=mine,webhook.extraMatchConditions[0].expression=true," +
				"webhook.extraMatchConditions[1].name=mine,webhook.extraMatchConditions[1].expression=false"},
			wantErr: `webhook.extraMatchConditions: the name "mine" is taken`,
		},
		"the periodic audit fix with extra match conditions it cannot evaluate": {
			args: []string{"--set", "audit.enabled=true,audit.fix=true", "--set-string",
				"webhook.extraMatchConditions[0].name=not-argocd,webhook.extraMatchConditions[0].expression=true"},
			wantErr: "audit.fix and webhook.extraMatchConditions exclude each other",
		},
		"an extra kind's subresource other than scale, which the server never reviews": {
			args:    []string{"--set", "extraKinds[0].group=apps,extraKinds[0].version=v1,extraKinds[0].resource=replicasets,extraKinds[0].subresources={scale,status}"},
			wantErr: "extraKinds[0].subresources: replicasets/status: only scale can be listed",
		},
		"an extra env var the chart sets": {
			args:    []string{"--set", "extraEnv[0].name=POD_NAME,extraEnv[0].value=x"},
			wantErr: "extraEnv: POD_NAME is set by the chart and cannot be redefined",
		},
		"tracing without a collector": {
			args:    []string{"--set", "tracing.enabled=true"},
			wantErr: "tracing.enabled needs tracing.endpoint",
		},
		"an existing service account without a name": {
			args:    []string{"--set", "serviceAccount.create=false"},
			wantErr: "serviceAccount.name is required",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := helm(t, append([]string{"template", releaseName, chartDir(t)}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("helm template %v: error %v, want one containing %q", tc.args, err, tc.wantErr)
			}
		})
	}
}
