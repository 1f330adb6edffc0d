package webhook_test

import (
	"regexp"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// An apply to an object whose last-applied a tool removed (Flux's clean-up
// after its server-side apply) puts back the image a person set with
// kubectl set image since: the apply warns, as it does with last-applied
// (generative seed 60334, sequence 005, there with a Service's label).
func TestApplyWithoutLastAppliedWarnsOfTheRevert(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", seeds+"seed003-v1.yaml").MustSucceed(t)
	k.Run(t, "patch", "deployment/nginx-deployment", "--type=json", "--field-manager=kustomize-controller",
		"-p", `[{"op":"remove","path":"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"}]`).MustSucceed(t)
	k.Run(t, "set", "image", "deployment/nginx-deployment", "nginx=nginx:1.99").MustSucceed(t)

	apply := framework.ApplyPredicted(t, k, seeds+"seed003-v1.yaml").MustSucceed(t)
	framework.WantMatch(t, grepLines(apply.Stderr, "Warning: [apply-reverts-drift]"), regexp.QuoteMeta(`Warning: [apply-reverts-drift] Deployment `+f.Namespace+`/nginx-deployment: `+
		`this apply sets spec.template.spec.containers[name=nginx].image back to "nginx:1.14.2", discarding "nginx:1.99" set by kubectl-set at `)+`.*`)
}
