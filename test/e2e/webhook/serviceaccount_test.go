package webhook_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// kubectl set serviceaccount writes spec.template.spec.serviceAccountName
// and its deprecated alias serviceAccount, which the API server keeps equal
// (removing either alone, it puts it back from the other). The next apply
// of a manifest without them warns of serviceAccountName, once, with a
// command that removes both, and the removal proof passes (generative seed
// 439078: both were missed, each one's removal alone was disproved).
func TestSetServiceAccountLeavesOneOrphan(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	framework.ApplyPredicted(t, k, seeds+"seed003-v1.yaml").MustSucceed(t)
	k.Run(t, "set", "serviceaccount", "deployment/nginx-deployment", "builder").MustSucceed(t)

	apply := framework.ApplyPredicted(t, k, seeds+"seed003-v2.yaml").MustSucceed(t)
	m := framework.WantMatch(t, grepLines(apply.Stderr, "Warning: [orphaned-field]"),
		regexp.QuoteMeta(`Warning: [orphaned-field] Deployment `+f.Namespace+`/nginx-deployment: spec.template.spec.serviceAccountName ("builder", set by kubectl-set at `)+
			`.*`+regexp.QuoteMeta(`Remove it with: `)+`(kubectl patch .*)`)
	command := m[0][1]
	if want := `{"op":"remove","path":"/spec/template/spec/serviceAccount"}`; !strings.Contains(command, want) {
		t.Errorf("the command does not remove the alias %s: %s", want, command)
	}
	k.RunPrinted(t, command)
	if got := k.JSONPath(t, "deployment/nginx-deployment", "{.spec.template.spec.serviceAccountName}{.spec.template.spec.serviceAccount}"); got != "" {
		t.Errorf("after the command: %q, want both gone", got)
	}
}
