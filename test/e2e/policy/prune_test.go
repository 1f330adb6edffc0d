package policy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

const timestamp = `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`

// Prune mode on seed 004: the undo happened in a namespace apply-hygiene
// ignored (as before it was installed), so last-applied stayed stale and
// TO_BE_DELETED came back. Once the namespace is reviewed, applying v3
// removes TO_BE_DELETED in the same request and says so.
func TestPruneModeRemovesOrphanOfAnUndoBeforeInstall(t *testing.T) {
	f := framework.New(t)
	framework.Reconfigure(t, "policy.rules.orphaned-field.action=prune")
	labelNamespace(t, f, "apply-hygiene.io/ignore=true")
	k := f.Kubectl
	const sts = "statefulset.apps/my-wonderhoy-app"
	k.Run(t, "apply", "-f", seeds+"seed004-v1.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=my-wonderhoy-app", 1)
	k.Run(t, "apply", "-f", seeds+"seed004-v2.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=my-wonderhoy-app", 2)
	k.Run(t, "rollout", "undo", sts, "--to-revision=1").MustSucceed(t)
	framework.WantLines(t, k.JSONPath(t, sts, "{.spec.template.spec.containers[0].env[0].name}"), "TO_BE_DELETED")

	k.Run(t, "label", "namespace", f.Namespace, "apply-hygiene.io/ignore-").MustSucceed(t)
	// The API server matches the webhooks' namespaceSelector against its
	// namespace cache: wait until a server-side dry run is reviewed.
	framework.Eventually(t, 30*time.Second, "the namespace to be reviewed", func(context.Context) (bool, error) {
		res := k.Run(t, "apply", "--dry-run=server", "-f", seeds+"seed004-v3.yaml")
		return strings.Contains(res.Stderr, "[orphaned-field]"), nil
	})

	apply := k.Run(t, "apply", "-f", seeds+"seed004-v3.yaml").MustSucceed(t)
	framework.WantLines(t, apply.Stdout, sts+" configured")
	framework.WantMatch(t, framework.SortedLines(apply.Stderr),
		quote("Warning: [apply-reverts-drift] StatefulSet "+f.Namespace+`/my-wonderhoy-app: this apply sets spec.template.spec.containers[name=nginx].image back to "nginx:a-fixed-version", discarding "nginx:latest" set by `)+".*",
		quote("Warning: [orphaned-field] StatefulSet "+f.Namespace+"/my-wonderhoy-app: spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED] "+
			`({"name":"TO_BE_DELETED","value":"needs to be deleted!"}, set by `)+`kubectl[a-z-]* at `+timestamp+
			quote(") is in neither your manifest nor last-applied, so kubectl apply will never remove it. apply-hygiene removes it in this request. "+
				"This apply therefore changes the pod template, so it rolls the pods (a new rollout starts)."))
	framework.WantLines(t, k.JSONPath(t, sts, "{.spec.template.spec.containers[0].env}"), `[{"name":"ANOTHER_ENV","value":"who cares?"}]`)
	framework.WantLines(t, k.JSONPath(t, sts, "{.spec.template.spec.containers[0].image}"), "nginx:a-fixed-version")
}

// Prune mode on kubectl set serviceaccount (seed 003): the API server
// keeps serviceAccountName and its deprecated alias serviceAccount equal
// and fills an empty name from the alias, so the apply of a manifest
// without them removes both in the request; removing the name alone left
// the Deployment as it was while the warning said it was removed.
func TestPruneRemovesServiceAccountNameWithItsAlias(t *testing.T) {
	f := framework.New(t)
	framework.Reconfigure(t, "policy.rules.orphaned-field.action=prune")
	k := f.Kubectl
	const deploy = "deployment/nginx-deployment"
	k.Run(t, "apply", "-f", seeds+"seed003-v1.yaml").MustSucceed(t)
	k.Run(t, "set", "serviceaccount", deploy, "builder").MustSucceed(t)

	apply := k.Run(t, "apply", "-f", seeds+"seed003-v2.yaml").MustSucceed(t)
	var warnings []string
	for _, line := range strings.Split(apply.Stderr, "\n") {
		if strings.Contains(line, "spec.template.spec.serviceAccountName") {
			warnings = append(warnings, line)
		}
	}
	framework.WantMatch(t, strings.Join(warnings, "\n"),
		quote("Warning: [orphaned-field] Deployment "+f.Namespace+`/nginx-deployment: spec.template.spec.serviceAccountName ("builder", set by kubectl-set at `)+timestamp+
			quote(") is in neither your manifest nor last-applied, so kubectl apply will never remove it. apply-hygiene removes it in this request. ")+".*")
	if got := k.JSONPath(t, deploy, "{.spec.template.spec.serviceAccountName}{.spec.template.spec.serviceAccount}"); got != "" {
		t.Errorf("after the prune: %q, want both gone", got)
	}
}
