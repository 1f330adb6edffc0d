package policy_test

import (
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Seed 003 with server-side apply (kubernetes issue 99003): the apply does
// not own restartedAt, kubectl-rollout does, so server-side apply keeps it
// forever; apply-hygiene warns, with the command that removes it.
func TestServerSideApplyAfterRestartWarnsOfRestartedAt(t *testing.T) {
	tests := map[string]struct {
		// nextSecond waits for the next second before the apply.
		nextSecond bool
	}{
		"seconds after the restart": {nextSecond: true},
		// managedFields times have whole seconds: the apply of an unchanged
		// field set in the second of the previous apply changes no entry;
		// the webhook still knows it from the manager's Apply entry.
		"within the second of the restart": {},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := framework.New(t)
			k := f.Kubectl
			k.Run(t, "apply", "--server-side", "-f", seeds+"seed003-v1.yaml").MustSucceed(t)
			k.Run(t, "rollout", "restart", "deployment/nginx-deployment").MustSucceed(t)
			if tc.nextSecond {
				time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
			}

			apply := k.Run(t, "apply", "--server-side", "-f", seeds+"seed003-v2.yaml").MustSucceed(t)
			framework.WantLines(t, apply.Stdout, "deployment.apps/nginx-deployment serverside-applied")
			framework.WantMatch(t, apply.Stderr,
				quote("Warning: [orphaned-field] Deployment "+f.Namespace+`/nginx-deployment: spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt] ("`)+
					timestamp+quote(`", set by kubectl-rollout at `)+timestamp+
					quote(") is in neither your manifest nor last-applied, so kubectl apply will never remove it. "+
						"Removing it changes the pod template, so it rolls the pods (a new rollout starts). Remove it with: kubectl patch deployments.apps/nginx-deployment -n "+
						f.Namespace+" --type=json -p ")+"'.*'")
			framework.WantLines(t, k.JSONPath(t, "deployment/nginx-deployment", "{.spec.template.spec.containers[0].image}"), "nginx:1.16.1")
		})
	}
}
