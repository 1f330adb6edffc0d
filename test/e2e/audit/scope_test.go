package audit_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// setEnvByHand applies web and adds an env var with kubectl set env: an
// orphan, which apply never removes.
func setEnvByHand(t *testing.T, k framework.Kubectl) {
	t.Helper()
	k.Run(t, "apply", "-f", "testdata/web.yaml").MustSucceed(t)
	k.Run(t, "set", "env", "deployment/web", "SET_BY_HAND=yes").MustSucceed(t)
}

// audit --fix=apply is a person's command: it removes the orphan that a
// warn rule reports, but never in a namespace labelled
// apply-hygiene.io/enforcement=dryrun, and in one labelled
// apply-hygiene.io/ignore only with --fix-ignored-namespaces. A finding
// left alone says why.
func TestFixStaysInScope(t *testing.T) {
	const orphan = "spec.template.spec.containers[name=nginx].env[name=SET_BY_HAND]"
	tests := map[string]struct {
		labels []string
		flags  []string
		// notFixed is the reason in the line of the finding left alone,
		// "" when it is fixed.
		notFixed string
	}{
		"a namespace apply-hygiene reviews": {},
		"a namespace labelled apply-hygiene.io/ignore": {
			labels:   []string{"apply-hygiene.io/ignore=true"},
			notFixed: "namespace %s is labelled apply-hygiene.io/ignore",
		},
		"a namespace labelled apply-hygiene.io/ignore, with --fix-ignored-namespaces": {
			labels: []string{"apply-hygiene.io/ignore=true"},
			flags:  []string{"--fix-ignored-namespaces"},
		},
		"a namespace labelled apply-hygiene.io/enforcement=dryrun, even with --fix-ignored-namespaces": {
			labels:   []string{"apply-hygiene.io/enforcement=dryrun"},
			flags:    []string{"--fix-ignored-namespaces"},
			notFixed: "its action is dryrun, which only records",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := framework.New(t)
			k := f.Kubectl
			if len(tc.labels) > 0 {
				k.Run(t, append([]string{"label", "namespace", f.Namespace, "--overwrite"}, tc.labels...)...).MustSucceed(t)
			}
			setEnvByHand(t, k)
			res := runHygiene(t, f, append([]string{"audit", "--fix=apply"}, tc.flags...)...)
			wantExit(t, res, 0)
			if tc.notFixed == "" {
				framework.WantLines(t, res.Stdout, "deployment.apps/web fixed: removed "+orphan+" (rolls the pods)", "1 object fixed, 0 findings left to you.")
				if got := k.JSONPath(t, "deployment/web", envExpr); got != "" {
					t.Errorf("env after the fix = %s, want none", got)
				}
				return
			}
			reason := tc.notFixed
			if reason == "namespace %s is labelled apply-hygiene.io/ignore" {
				reason = "namespace " + f.Namespace + " is labelled apply-hygiene.io/ignore"
			}
			framework.WantLines(t, res.Stdout,
				"deployment.apps/web not fixed: orphaned-field "+orphan+" ("+reason+"); fix it with: kubectl patch deployments.apps/web -n "+f.Namespace+
					` --type=json -p '[{"op":"test","path":"/spec/template/spec/containers/0/name","value":"nginx"},{"op":"test","path":"/spec/template/spec/containers/0/env/0/name","value":"SET_BY_HAND"},{"op":"remove","path":"/spec/template/spec/containers/0/env/0"}]'`,
				"0 objects fixed, 1 finding left to you.")
			framework.WantLines(t, k.JSONPath(t, "deployment/web", envExpr), `[{"name":"SET_BY_HAND","value":"yes"}]`)
		})
	}
}
