package crd_test

import (
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// A custom resource whose kind, Deployment, is also apps's, next to an
// apps Deployment of the same name: the denial of an edit of the custom
// one names it as deployments.example.com/web (kubectl takes
// "deployment/web" for apps's), and its hand-over command, run as
// printed, hands the field of the custom Deployment over and leaves the
// apps Deployment's last-applied alone; the edit then passes.
func TestHandoverOfAKindNamedLikeABuiltInNamesItsGroup(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/samename-crd.yaml").MustSucceed(t)
	k.Run(t, "wait", "--for=condition=Established", "crd/deployments.example.com", "--timeout=60s").MustSucceed(t)
	k.Run(t, "apply", "-f", "testdata/samename-apps.yaml").MustSucceed(t)
	framework.ApplyPredicted(t, k, "testdata/samename-custom.yaml").MustSucceed(t)
	const lastApplied = `{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`
	appsBefore := k.JSONPath(t, "deployments.apps/web", lastApplied)

	edit := []string{"patch", "deployments.example.com/web", "--type=merge", "-p", `{"spec":{"image":"example.com/web:2"}}`}
	denied := k.Run(t, edit...).MustFail(t)
	framework.WantLines(t, denied.Stderr, "Error from server (Forbidden): "+framework.DeniedPrefix+
		"[imperative-edit] Deployment "+f.Namespace+"/web: this write by "+controlplane.AdminUser+" (field manager kubectl-patch) changes fields that last-applied owns: "+
		`spec.image (last-applied "example.com/web:1", now "example.com/web:2"); `+
		"the next kubectl apply puts the last-applied values back without a word. Put the change in your manifest and run kubectl apply, "+
		"or hand a field over to its new writer by deleting it from last-applied first with: kubectl hygiene handover deployments.example.com/web -n "+f.Namespace+" spec.image")
	_, command, _ := strings.Cut(denied.Stderr, "first with: ")
	out := k.RunPrinted(t, strings.TrimSpace(command))
	framework.WantLines(t, strings.TrimSpace(out),
		"Deployment "+f.Namespace+"/web: last-applied no longer has spec.image",
		"The next kubectl apply neither sets nor deletes them: they are their new writer's.",
		"Drop them from your manifest too: an apply of a manifest that sets them takes them back.")

	framework.WantLines(t, k.JSONPath(t, "deployments.example.com/web", lastApplied),
		`{"apiVersion":"example.com/v1","kind":"Deployment","metadata":{"annotations":{},"name":"web","namespace":"`+f.Namespace+`"}}`)
	if after := k.JSONPath(t, "deployments.apps/web", lastApplied); after != appsBefore {
		t.Errorf("the hand-over wrote the apps Deployment's last-applied: was\n%s\nis\n%s", appsBefore, after)
	}
	passed := k.Run(t, edit...).MustSucceed(t)
	framework.WantLines(t, passed.Stdout, "deployment.example.com/web patched")
	framework.WantLines(t, passed.Stderr)
}
