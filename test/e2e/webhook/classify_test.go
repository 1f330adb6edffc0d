package webhook_test

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// kubectl edit --save-config records the edited object as last-applied,
// as kubectl replace --save-config does: a hand-over of the fields to the
// new last-applied, allowed without a word (issue 25: it was denied as an
// edit while replace --save-config passed).
func TestEditSaveConfigIsASaveConfig(t *testing.T) {
	lineEditor := framework.WriteFile(t, "line-editor.sh", "#!/bin/sh\nsed -i 's/^\\( *image: \\)nginx:1.14.2$/\\1nginx:1.99/' \"$1\"\n", 0o755)
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)

	k.Env = []string{"EDITOR=" + lineEditor, "KUBE_EDITOR=" + lineEditor}
	edit := k.Run(t, "edit", "--save-config", "deployment/web").MustSucceed(t)
	framework.WantLines(t, edit.Stdout, "deployment.apps/web edited")
	framework.WantLines(t, edit.Stderr)
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.template.spec.containers[0].image}"), "nginx:1.99")
	la := k.JSONPath(t, "deployment/web", `{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`)
	if !strings.Contains(la, `"image":"nginx:1.99"`) {
		t.Errorf("last-applied after kubectl edit --save-config: want the edited image nginx:1.99, got:\n%s", la)
	}
}

// Only kube-controller-manager's own service accounts in kube-system are
// controllers; another account there, such as Argo CD's argocd-manager in
// a managed cluster, is a service account like any other: its imperative
// edit is warned about (issue 25: every kube-system account skipped every
// rule, in the chart's match condition and in the server).
func TestKubeSystemServiceAccountsAreControllersByName(t *testing.T) {
	tests := map[string]struct {
		account string
		stderr  func(ns, user string) []string
	}{
		"Argo CD's argocd-manager is reviewed": {
			account: "argocd-manager",
			stderr: func(ns, user string) []string {
				return []string{"Warning: " + imperativeDenial(ns, user, "kubectl-set", imageField, imageArg)}
			},
		},
		"kube-controller-manager's deployment-controller is not": {
			account: "deployment-controller",
			stderr:  func(string, string) []string { return nil },
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := framework.New(t)
			f.Kubectl.Run(t, "apply", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
			user := "system:serviceaccount:kube-system:" + tc.account
			f.Grant(t, "edit", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: tc.account, Namespace: "kube-system"})
			k := f.KubectlAs(t, user)
			res := k.Run(t, "set", "image", "deployment/web", "nginx=nginx:1.99").MustSucceed(t)
			framework.WantLines(t, res.Stdout, "deployment.apps/web image updated")
			framework.WantLines(t, res.Stderr, tc.stderr(f.Namespace, user)...)
			framework.WantLines(t, f.Kubectl.JSONPath(t, "deployment/web", "{.spec.template.spec.containers[0].image}"), "nginx:1.99")
		})
	}
}
