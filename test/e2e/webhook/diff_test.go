package webhook_test

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Seed 003: after kubectl rollout restart, `kubectl hygiene diff -f v2`
// against the cluster predicts the orphaned restartedAt warning that the
// apply of v2 then prints; before the first apply it predicts a creation
// and no warning; after it, diff -f v2 says unchanged and names the orphan
// that stays.
func TestDiffPredictsTheApplyWarningsSeed003(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl

	first := framework.ApplyPredicted(t, k, seeds+"seed003-v1.yaml").MustSucceed(t)
	if strings.Contains(first.Stderr, "Warning:") {
		t.Errorf("the first apply warned:\n%s", first.Stderr)
	}
	k.Run(t, "rollout", "restart", "deployment/nginx-deployment").MustSucceed(t)

	// The predictor holds diff's findings equal to what the apply prints.
	apply := framework.ApplyPredicted(t, k, seeds+"seed003-v2.yaml").MustSucceed(t)
	if !strings.Contains(apply.Stderr, "Warning: [orphaned-field] ") || !strings.Contains(apply.Stderr, "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]") {
		t.Errorf("the apply of v2 printed\n%s\nwant the orphaned restartedAt", apply.Stderr)
	}

	// v2 again is what last-applied holds: kubectl apply sends nothing,
	// and diff says so, with the orphan that stays (as explain shows it).
	at := k.JSONPath(t, "deployment/nginx-deployment", `{.spec.template.metadata.annotations.kubectl\.kubernetes\.io/restartedAt}`)
	again := f.Hygiene(t, "diff", "-f", seeds+"seed003-v2.yaml", "-n", f.Namespace).MustSucceed(t)
	name := f.Namespace + "/nginx-deployment"
	framework.WantLines(t, again.Stdout,
		"Deployment "+name+": unchanged (strategicMergePatch)",
		"  kubectl apply sends no request; what stays (kubectl hygiene explain):",
		"  WARN: [orphaned-field] Deployment "+name+": spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt] "+
			`("`+at+`", set by kubectl-rollout at `+at+`) is not in last-applied, so kubectl apply will never remove it unless your manifest sets it. `+
			"Removing it changes the pod template, so it rolls the pods (a new rollout starts). Remove it with: kubectl patch deployments.apps/nginx-deployment -n "+f.Namespace+
			` --type=json -p '[{"op":"test","path":"/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt","value":"`+at+
			`"},{"op":"remove","path":"/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt"}]'`,
		"No findings of the apply.")
}

// Seed 002: after a kubectl set image (by a member of the break-glass
// group, so admission lets it through), `kubectl hygiene diff -f v1`
// predicts that the apply reverts it, and the apply warns exactly so.
func TestDiffPredictsTheApplyWarningsSeed002(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
	f.Grant(t, "edit", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: breakGlassGroup})
	f.KubectlAs(t, "oncall-bob", breakGlassGroup).Run(t, "set", "image", "deployment/web", "nginx=nginx:1.99").MustSucceed(t)

	// The predictor holds diff's findings equal to what the apply prints.
	apply := framework.ApplyPredicted(t, k, "testdata/deployment-v1.yaml").MustSucceed(t)
	if !strings.Contains(apply.Stderr, "Warning: [apply-reverts-drift] ") || !strings.Contains(apply.Stderr, "spec.template.spec.containers[name=nginx].image") {
		t.Errorf("the apply printed\n%s\nwant the image's revert", apply.Stderr)
	}
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.template.spec.containers[0].image}"), "nginx:1.14.2")
}

// Under the chart's default kinds (workloads) the API server never sends
// a ConfigMap's writes to apply-hygiene: `kubectl hygiene diff` of the
// apply that reverts a kubectl edit of one predicts nothing of
// apply-hygiene's, says why on stderr and exits 0, and kubectl apply
// indeed prints nothing. explain still shows the drift: it describes the
// object, whoever reviews its writes.
func TestDiffPredictsNothingForAKindTheWebhooksAreNotSent(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	manifest := framework.WriteFile(t, "settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: blue\n", 0o644)
	k.Run(t, "apply", "-f", manifest).MustSucceed(t)
	k.Run(t, "patch", "configmap/settings", "--type=merge", "-p", `{"data":{"mode":"green"}}`).MustSucceed(t)

	diff := f.Hygiene(t, "diff", "-f", manifest, "-n", f.Namespace, "-o", "json").MustSucceed(t)
	framework.WantLines(t, diff.Stderr,
		"using policy configuration from configmap apply-hygiene/apply-hygiene-config and no user policies",
		"note: ConfigMap "+f.Namespace+"/settings: validatingwebhookconfiguration apply-hygiene does not send its UPDATE to apply-hygiene "+
			"(rules, namespaceSelector, objectSelector), so kubectl apply prints nothing of apply-hygiene's for it")
	if !strings.Contains(diff.Stdout, `"findings": []`) {
		t.Errorf("diff predicts findings:\n%s", diff.Stdout)
	}
	apply := framework.ApplyPredicted(t, k, manifest).MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "configmap/settings configured")
	framework.WantLines(t, apply.Stderr)

	k.Run(t, "patch", "configmap/settings", "--type=merge", "-p", `{"data":{"mode":"green"}}`).MustSucceed(t)
	explain := f.Hygiene(t, "explain", "configmap/settings", "-n", f.Namespace).MustSucceed(t)
	if !strings.Contains(explain.Stdout, "[imperative-edit]") && !strings.Contains(explain.Stdout, "[apply-reverts-drift]") {
		t.Errorf("explain shows no drift:\n%s", explain.Stdout)
	}
}
