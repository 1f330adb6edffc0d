package webhook_test

import (
	"regexp"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// A manifest that an older kubectl generated (creationTimestamp: null,
// status: {}, empty strategy and resources) applies without a word,
// again, tidied and back: the nulls and empty maps are no fields of a
// person, and no apply of them drifts, orphans or resets anything. A
// person's kubectl set image of the image it applied is still denied.
func TestGeneratedManifestAppliesQuietly(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	for i, file := range []string{"testdata/generated-v1.yaml", "testdata/generated-v1.yaml", "testdata/generated-clean-v1.yaml", "testdata/generated-v1.yaml"} {
		res := framework.ApplyPredicted(t, k, file).MustSucceed(t)
		if i == 0 {
			framework.WantLines(t, res.Stdout, "deployment.apps/web created")
		}
		framework.WantLines(t, res.Stderr)
	}
	res := k.Run(t, "set", "image", "deployment/web", "nginx=nginx:1.99").MustFail(t)
	framework.WantMatch(t, res.Stderr, regexp.QuoteMeta("error: failed to patch image update to pod template: "+framework.DeniedPrefix+
		imperativeDenial(f.Namespace, "apply-hygiene-admin", "kubectl-set", imageField, imageArg)))
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.template.spec.containers[0].image} {.spec.replicas}"), "nginx:1.14.2 2")
}
