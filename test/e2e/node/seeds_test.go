package node_test

import (
	"regexp"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

const (
	seeds        = "../seeds/testdata/"
	webhookFiles = "../webhook/testdata/"
)

// Seed 003 through the Service: the apply after kubectl rollout restart
// warns about the restartedAt annotation that no manifest has, with the
// same line as in url mode (test/e2e/webhook).
func TestRestartedAtWarningThroughTheService(t *testing.T) {
	installed(t)
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", seeds+"seed003-v1.yaml").MustSucceed(t)
	k.Run(t, "rollout", "restart", "deployment/nginx-deployment").MustSucceed(t)

	apply := k.Run(t, "apply", "-f", seeds+"seed003-v2.yaml").MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/nginx-deployment configured")
	ts := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`
	framework.WantMatch(t, apply.Stderr,
		regexp.QuoteMeta("Warning: [orphaned-field] Deployment "+f.Namespace+"/nginx-deployment: "+
			"spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt] (\"")+ts+regexp.QuoteMeta("\", set by kubectl-rollout at ")+ts+
			regexp.QuoteMeta(") is in neither your manifest nor last-applied, so kubectl apply will never remove it. "+
				"Removing it changes the pod template, so it rolls the pods (a new rollout starts). Remove it with: ")+
			"kubectl patch deployments.apps/nginx-deployment -n "+regexp.QuoteMeta(f.Namespace)+" --type=json -p '.*'")
}

// kubectl set image of a field that last-applied owns is denied through
// the Service, with the same line as in url mode (test/e2e/webhook).
func TestImperativeEditDeniedThroughTheService(t *testing.T) {
	installed(t)
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", webhookFiles+"deployment-v1.yaml").MustSucceed(t)

	res := k.Run(t, "set", "image", "deployment/web", "nginx=nginx:1.99").MustFail(t)
	framework.WantMatch(t, res.Stderr, regexp.QuoteMeta("error: failed to patch image update to pod template: "+framework.DeniedPrefix+
		"[imperative-edit] Deployment "+f.Namespace+"/web: this write by "+controlplane.AdminUser+" (field manager kubectl-set) changes fields that last-applied owns: "+
		`spec.template.spec.containers[name=nginx].image (last-applied "nginx:1.14.2", now "nginx:1.99"); `+
		"the next kubectl apply puts the last-applied values back without a word. Put the change in your manifest and run kubectl apply, "+
		"or hand a field over to its new writer by deleting it from last-applied first with: kubectl hygiene handover deployments.apps/web -n "+f.Namespace+" 'spec.template.spec.containers[name=nginx].image'"))
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.template.spec.containers[0].image}"), "nginx:1.14.2")
}
