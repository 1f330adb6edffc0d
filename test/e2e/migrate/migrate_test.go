package migrate_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

const (
	v1 = "testdata/web-v1.yaml"
	v2 = "testdata/web-v2.yaml"
	// gitOpsManager is the field manager of Flux's kustomize-controller,
	// standing for any controller that applies server-side through
	// client-go.
	gitOpsManager = "kustomize-controller"
)

// ownedFields are the fields of web-v1.yaml that kubectl-client-side-apply
// owns, as migrate lists them.
var ownedFields = []string{
	"    metadata.labels.app",
	"    metadata.labels.team",
	"    spec.replicas",
	"    spec.selector",
	"    spec.template.metadata.labels.app",
	"    spec.template.spec.containers[name=nginx].image",
	"    spec.template.spec.containers[name=nginx].name",
	"    spec.template.spec.containers[name=nginx].env[name=DEBUG].name",
	"    spec.template.spec.containers[name=nginx].env[name=DEBUG].value",
	"    spec.template.spec.containers[name=nginx].env[name=KEEP].name",
	"    spec.template.spec.containers[name=nginx].env[name=KEEP].value",
}

// migrateLines is migrate's text output for web-v1.yaml in namespace ns:
// the object's block up to the fields, then upgrade (the line that says
// what became of the upgrade) and tail (the line on last-applied and the
// summary).
func migrateLines(ns, upgrade string, tail ...string) []string {
	lines := []string{
		"Deployment " + ns + "/web: client-side apply by kubectl-client-side-apply",
		"  fields it owns, which a server-side apply that drops them leaves behind unless upgraded:",
	}
	lines = append(lines, ownedFields...)
	lines = append(lines,
		"  and 14 field(s) the server defaulted (a manifest that leaves them out gets the default again; -o json lists them)",
		upgrade)
	return append(lines, tail...)
}

func keptLine(ns string) string {
	return "  last-applied: kept; server-side apply does not need it: drop it with --drop-last-applied, or kubectl annotate deployment.apps/web -n " +
		ns + " kubectl.kubernetes.io/last-applied-configuration-"
}

const (
	upgradedLine = "  upgraded: their fields now belong to %s (Apply), whose next server-side apply deletes those its manifest drops"
	dryRunLine   = "  would upgrade: their fields would belong to %s (Apply), whose next server-side apply deletes those its manifest drops (dry run)"
)

// A Deployment applied client-side with the label team and the env var
// DEBUG, then applied server-side from a manifest without them. kubectl
// apply --server-side upgrades client-side apply's managedFields itself
// (for any --field-manager), so the fields go; a controller's plain apply
// patch leaves them behind, unless kubectl hygiene migrate upgraded the
// object for its manager first.
func TestServerSideApplyAfterClientSideApply(t *testing.T) {
	kubectlSSA := func(args ...string) func(*testing.T, *framework.Framework) {
		return func(t *testing.T, f *framework.Framework) {
			f.Kubectl.Run(t, append([]string{"apply", "--server-side", "-f", v2}, args...)...).MustSucceed(t)
		}
	}
	gitOpsApply := func(t *testing.T, f *framework.Framework) { clientGoApply(t, f, v2, gitOpsManager) }
	dropped := state{Env: []string{"KEEP"}, LastApplied: true}
	tests := map[string]struct {
		// migrate are the flags of kubectl hygiene migrate --server-side;
		// nil: no migration.
		migrate []string
		manager string
		apply   func(*testing.T, *framework.Framework)
		want    state
	}{
		"kubectl apply --server-side upgrades by itself": {
			apply: kubectlSSA(),
			want:  with(dropped, "kubectl Apply", "kubectl-last-applied Apply"),
		},
		"kubectl apply --server-side --field-manager=kustomize-controller upgrades by itself too": {
			apply: kubectlSSA("--field-manager=" + gitOpsManager),
			// Observed with kubectl 1.37: with a manager other than its
			// default, kubectl does not apply last-applied as
			// kubectl-last-applied first, and its second apply removes it.
			want: state{Env: []string{"KEEP"}, Managers: []string{gitOpsManager + " Apply"}},
		},
		"a controller's apply without the migration leaves the dropped fields behind": {
			apply: gitOpsApply,
			want: state{Team: "payments", Env: []string{"KEEP", "DEBUG"}, LastApplied: true,
				Managers: []string{"kubectl-client-side-apply Update", gitOpsManager + " Apply"}},
		},
		"after migrate --field-manager kustomize-controller the controller's apply deletes them": {
			migrate: []string{"--field-manager", gitOpsManager},
			manager: gitOpsManager,
			apply:   gitOpsApply,
			want:    with(dropped, "kubectl-last-applied Apply", gitOpsManager+" Apply"),
		},
		"after migrate kubectl apply --server-side deletes them": {
			migrate: []string{},
			manager: "kubectl",
			// Upgraded beforehand, the apply draws no warning of
			// apply-hygiene.
			apply: func(t *testing.T, f *framework.Framework) {
				res := f.Kubectl.Run(t, "apply", "--server-side", "-f", v2).MustSucceed(t)
				framework.WantLines(t, res.Stdout, "deployment.apps/web serverside-applied")
				framework.WantLines(t, res.Stderr)
			},
			want: with(dropped, "kubectl Apply", "kubectl-last-applied Apply"),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := framework.New(t)
			f.Kubectl.Run(t, "apply", "-f", v1).MustSucceed(t)
			if tc.migrate != nil {
				res := f.Hygiene(t, append([]string{"migrate", "--server-side", "-n", f.Namespace}, tc.migrate...)...)
				if res.ExitCode != 0 {
					t.Fatalf("migrate exited %d:\n%s", res.ExitCode, res.Stderr)
				}
				// Nothing on stderr: no warning of apply-hygiene on the writes.
				framework.WantLines(t, res.Stderr)
				framework.WantLines(t, res.Stdout, migrateLines(f.Namespace, fmt.Sprintf(upgradedLine, tc.manager),
					keptLine(f.Namespace), "1 object(s) upgraded, 0 with nothing to upgrade, 0 failed.")...)
			}
			tc.apply(t, f)
			if diff := cmp.Diff(tc.want, stateOf(t, f)); diff != "" {
				t.Errorf("deployment/web after the server-side apply (-want +got):\n%s", diff)
			}
			if slices.Contains(tc.want.Managers, "kubectl-client-side-apply Update") {
				return
			}
			// Upgraded: migrate finds nothing more to do.
			res := f.Hygiene(t, "migrate", "--server-side", "-n", f.Namespace)
			if !tc.want.LastApplied {
				framework.WantLines(t, res.Stdout, "No objects managed by client-side apply.")
				return
			}
			framework.WantLines(t, res.Stdout,
				"Deployment "+f.Namespace+"/web: no client-side apply manager left, only the last-applied annotation",
				"  last-applied: kept; server-side apply does not need it: drop it with kubectl annotate deployment.apps/web -n "+
					f.Namespace+" kubectl.kubernetes.io/last-applied-configuration-",
				"0 object(s) upgraded, 1 with nothing to upgrade, 0 failed.")
		})
	}
}

// with returns s with the managers.
func with(s state, managers ...string) state {
	s.Managers = managers
	return s
}
