package webhook_test

import (
	"fmt"
	"regexp"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// kubectl apply, kubectl edit --save-config of the image, kubectl rollout
// undo, then kubectl set image under kubectl apply's field manager, on a
// DaemonSet whose template has a downward-API fieldRef (soak seed 271126,
// sequence 172). The revision the undo restores kept the manifest of the
// apply; the API server's default inside the fieldRef (apiVersion: v1) is
// no reason to distrust it, so the undo's repair gives last-applied the
// restored image. The set image then moves that image away from
// last-applied: an imperative edit, denied for a person, whatever manager
// it names. (The repair was skipped, and the set image passed with two
// [apply-reverts-drift] warnings claiming it set back kubectl edit's image,
// which it does not set.)
func TestDaemonSetUndoAfterEditSaveConfigThenSetImageAsApplier(t *testing.T) {
	lineEditor := framework.WriteFile(t, "line-editor.sh", "#!/bin/sh\nsed -i 's/^\\( *image: \\)agent:1$/\\1agent:2/' \"$1\"\n", 0o755)
	f := framework.New(t)
	k := f.Kubectl
	const short = "daemonset/agent"
	framework.ApplyPredicted(t, k, "testdata/daemonset-fieldref-v1.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=agent", 1)
	edit := k
	edit.Env = []string{"EDITOR=" + lineEditor, "KUBE_EDITOR=" + lineEditor}
	framework.WantLines(t, edit.Run(t, "edit", "--save-config", short).MustSucceed(t).Stdout, "daemonset.apps/agent edited")
	f.WaitForRevisions(t, "app=agent", 2)

	undo := k.Run(t, "rollout", "undo", short).MustSucceed(t)
	framework.WantLines(t, undo.Stdout, "daemonset.apps/agent rolled back")
	framework.WantLines(t, undo.Stderr, kubectlUndoWarning("daemonsets", "agent"),
		staleRepairedWarning("DaemonSet", f.Namespace, "agent", "daemonsets.apps/agent"))
	if got := containerOf(viewLastApplied(t, k, short))["image"]; got != "agent:1" {
		t.Errorf("last-applied image after the undo = %v, want the restored agent:1", got)
	}

	set := k.Run(t, "set", "image", short, "agent=agent:3", "--field-manager=kubectl-client-side-apply").MustFail(t)
	framework.WantMatch(t, set.Stderr, regexp.QuoteMeta("error: failed to patch image update to pod template: "+framework.DeniedPrefix+
		fmt.Sprintf("[imperative-edit] DaemonSet %s/agent: this write by apply-hygiene-admin (field manager kubectl-client-side-apply) changes fields that last-applied owns: "+
			`spec.template.spec.containers[name=agent].image (last-applied "agent:1", now "agent:3"); `+
			"the next kubectl apply puts the last-applied values back without a word. Put the change in your manifest and run kubectl apply, "+
			"or hand a field over to its new writer by deleting it from last-applied first with: kubectl hygiene handover daemonsets.apps/agent -n %s "+
			"'spec.template.spec.containers[name=agent].image'", f.Namespace, f.Namespace)))
	framework.WantLines(t, k.JSONPath(t, short, "{.spec.template.spec.containers[0].image}"), "agent:1")
}

// kubectl set image under kubectl apply's field manager over an image that
// had drifted from a last-applied that an undo left stale (the restored
// revision was made by kubectl set image, so its kept manifest proves
// nothing about it): kubectl's patch for an apply of that last-applied
// would set the image too, so nothing tells the write from such an apply
// behind a digest-pinning webhook (docs/rules.md), but the write ends with
// a third image and sets nothing back. It passes without a word (it was
// told "this apply sets … image back to "agent:1"", which it does not).
func TestSetImageAsApplierOverAStaleLastAppliedSetsNothingBack(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	const short = "daemonset/agent"
	framework.ApplyPredicted(t, k, "testdata/daemonset-v1.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=agent", 1)
	f.Grant(t, "edit", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: breakGlassGroup})
	bob := f.KubectlAs(t, "oncall-bob", breakGlassGroup)
	bob.Run(t, "set", "image", short, "agent=agent:2").MustSucceed(t)
	f.WaitForRevisions(t, "app=agent", 2)
	bob.Run(t, "set", "image", short, "agent=agent:3").MustSucceed(t)
	f.WaitForRevisions(t, "app=agent", 3)
	k.Run(t, "rollout", "undo", short).MustSucceed(t)
	framework.WantLines(t, k.JSONPath(t, short, "{.spec.template.spec.containers[0].image}"), "agent:2")
	if got := containerOf(viewLastApplied(t, k, short))["image"]; got != "agent:1" {
		t.Fatalf("last-applied image after the undo = %v, want agent:1 (no repair: nothing proves agent:2 a manifest's)", got)
	}

	set := k.Run(t, "set", "image", short, "agent=agent:4", "--field-manager=kubectl-client-side-apply").MustSucceed(t)
	framework.WantLines(t, set.Stdout, "daemonset.apps/agent image updated")
	framework.WantLines(t, set.Stderr)
}
