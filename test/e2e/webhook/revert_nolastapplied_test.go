package webhook_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

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

// kubectl replace of a manifest (which has no last-applied) drops
// last-applied: no value is left for the next apply to put back, so the
// replace is no imperative edit and passes, and the next apply, which
// patches its manifest in as over an object made without last-applied,
// says what it sets back (generative seed 271126, sequence 002: the
// replace was denied).
func TestReplaceThatDropsLastAppliedPasses(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", seeds+"seed003-v1.yaml").MustSucceed(t)
	v1, err := os.ReadFile(seeds + "seed003-v1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	manifest := framework.WriteFile(t, "replaced.yaml", strings.Replace(string(v1), "image: nginx:1.14.2", "image: nginx:1.99", 1), 0o644)

	// A kubectl-replace entry within a second of the creation (the API
	// server cuts both times to seconds) is a re-creation's (kubectl
	// replace --force), whose fields are a creator's: replace two
	// seconds on, as a person does.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(2100 * time.Millisecond)))
	replace := k.Run(t, "replace", "-f", manifest).MustSucceed(t)
	framework.WantLines(t, replace.Stdout, "deployment.apps/nginx-deployment replaced")
	framework.WantLines(t, replace.Stderr)
	framework.WantLines(t, k.JSONPath(t, "deployment/nginx-deployment", `{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`))

	apply := framework.ApplyPredicted(t, k, seeds+"seed003-v1.yaml").MustSucceed(t)
	framework.WantMatch(t, grepLines(apply.Stderr, "Warning: [apply-reverts-drift]"), regexp.QuoteMeta(`Warning: [apply-reverts-drift] Deployment `+f.Namespace+`/nginx-deployment: `+
		`this apply sets spec.template.spec.containers[name=nginx].image back to "nginx:1.14.2", discarding "nginx:1.99" set by kubectl-replace at `)+`.*`)
}
