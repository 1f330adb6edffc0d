package seeds_test

import (
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Seed 004: an env var removed from the manifest survives apply after a
// rollout undo, because undo restored the template but left last-applied at
// the newer manifest.
func TestSeed004RolloutUndoLeavesRemovedEnvBehind(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	const sts = "statefulset.apps/my-wonderhoy-app"

	framework.WantLines(t, k.Run(t, "apply", "-f", "testdata/seed004-v1.yaml").MustSucceed(t).Stdout, sts+" created")
	f.WaitForRevisions(t, "app=my-wonderhoy-app", 1)
	framework.WantLines(t, k.Run(t, "apply", "-f", "testdata/seed004-v2.yaml").MustSucceed(t).Stdout, sts+" configured")
	f.WaitForRevisions(t, "app=my-wonderhoy-app", 2)

	history := k.Run(t, "rollout", "history", sts).MustSucceed(t)
	framework.WantLines(t, history.Stdout, sts+" ", "REVISION  CHANGE-CAUSE", "1         <none>", "2         <none>", "")

	// kubectl itself now warns that undo leaves last-applied alone.
	undo := k.Run(t, "rollout", "undo", sts, "--to-revision=1").MustSucceed(t)
	framework.WantLines(t, undo.Stdout, sts+" rolled back")
	framework.WantLines(t, undo.Stderr, "Warning: resource statefulsets/my-wonderhoy-app was previously managed with 'kubectl apply'. "+
		"Rolling back will not update the kubectl.kubernetes.io/last-applied-configuration annotation, which may cause "+
		"unexpected behavior on future 'kubectl apply' operations. Consider using 'kubectl apply' with your previous "+
		"configuration file instead.")
	env := k.Run(t, "get", sts, "-o", "jsonpath={.spec.template.spec.containers[0].env}").MustSucceed(t)
	framework.WantLines(t, env.Stdout, `[{"name":"TO_BE_DELETED","value":"needs to be deleted!"},{"name":"ANOTHER_ENV","value":"who cares?"}]`)

	// The stale part: last-applied still describes v2.
	lastApplied := k.Run(t, "apply", "view-last-applied", sts, "-o", "json").MustSucceed(t)
	if strings.Contains(lastApplied.Stdout, "TO_BE_DELETED") || !strings.Contains(lastApplied.Stdout, "nginx:a-broken-version") {
		t.Errorf("last-applied after undo = %s, want v2's (broken image, no TO_BE_DELETED)", lastApplied.Stdout)
	}

	framework.WantLines(t, k.Run(t, "apply", "-f", "testdata/seed004-v3.yaml").MustSucceed(t).Stdout, sts+" configured")
	env = k.Run(t, "get", sts, "-o", "jsonpath={.spec.template.spec.containers[0].env}").MustSucceed(t)
	framework.WantLines(t, env.Stdout, `[{"name":"TO_BE_DELETED","value":"needs to be deleted!"},{"name":"ANOTHER_ENV","value":"who cares?"}]`)
	image := k.Run(t, "get", sts, "-o", "jsonpath={.spec.template.spec.containers[0].image}").MustSucceed(t)
	framework.WantLines(t, image.Stdout, "nginx:a-fixed-version")
}
