package audit_test

import (
	"slices"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// changedLines are what audit --fix=apply prints on stderr when it left
// Deployment or StatefulSet name alone because its fix no longer holds.
func changedLines(name string) []string {
	return append(slices.Clone(noInstallation),
		pausedLine,
		"error: "+name+" was not fixed: it changed since the audit read it; nothing was written to it. Run the audit again to see it as it is now",
		"error: 1 object of 1 not fixed")
}

// The fix reads each object again right before writing it and writes only
// what still holds. After the scan a controller takes over the env var
// that kubectl set env added, with the same value (server-side apply of
// its own manager): it is no longer an orphan, and nothing is removed;
// the patch of the scan would still have passed its tests, since neither
// last-applied nor the value changed.
func TestFixLeavesAFieldAControllerTookOver(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	setEnvByHand(t, k)
	takeOver := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"template":{"spec":{"containers":[{"name":"nginx","env":[{"name":"SET_BY_HAND","value":"yes"}]}]}}}}`

	res := runPaused(t, f, func() {
		k.RunWithInput(t, takeOver, "apply", "--server-side", "--field-manager=env-controller", "-f", "-").MustSucceed(t)
	}, "audit", "--fix=apply")
	wantExit(t, res, 1)
	framework.WantLines(t, res.Stderr, changedLines("deployment.apps/web")...)
	framework.WantLines(t, res.Stdout, "0 objects fixed, 0 findings left to you.")
	framework.WantLines(t, k.JSONPath(t, "deployment/web", envExpr), `[{"name":"SET_BY_HAND","value":"yes"}]`)
	framework.WantLines(t, runHygiene(t, f, "audit", "--fix=apply").Stdout, "Nothing to fix.")
}

// After the scan found seed 004's StatefulSet undone to revision 1, a
// person undoes the undo: the template is v2's again and last-applied is
// right. The repair the scan planned (v1's last-applied) would make the
// clean object wrong; nothing is written.
func TestFixLeavesAnUndoThatWasUndone(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/seed004-v1.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=my-wonderhoy-app", 1)
	k.Run(t, "apply", "-f", "testdata/seed004-v2.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=my-wonderhoy-app", 2)
	v2 := k.JSONPath(t, sts, lastAppliedExpr)
	k.Run(t, "rollout", "undo", sts, "--to-revision=1").MustSucceed(t)
	f.WaitForRevisions(t, "app=my-wonderhoy-app", 2)
	restoredRevision(t, f)

	res := runPaused(t, f, func() {
		k.Run(t, "rollout", "undo", sts, "--to-revision=2").MustSucceed(t)
	}, "audit", "--fix=apply")
	wantExit(t, res, 1)
	framework.WantLines(t, res.Stderr, changedLines(sts)...)
	framework.WantLines(t, res.Stdout, "0 objects fixed, 0 findings left to you.")
	if got := k.JSONPath(t, sts, lastAppliedExpr); got != v2 {
		t.Errorf("last-applied after the undone undo:\n%s\nwant v2's, which the template has again:\n%s", got, v2)
	}
	framework.WantLines(t, k.JSONPath(t, sts, "{.spec.template.spec.containers[0].env}"), `[{"name":"ANOTHER_ENV","value":"who cares?"}]`)
}

// The repair of last-applied is written as the field manager that owns
// the annotation, kubectl-client-side-apply: kubectl apply --server-side,
// which upgrades to server-side apply the Update managers that own
// last-applied, then finds every client-side field, so the first
// server-side apply of a manifest without ANOTHER_ENV deletes it. Written
// as kubectl-hygiene, the upgrade would move only kubectl-hygiene's
// annotation and ANOTHER_ENV would stay, owned by
// kubectl-client-side-apply, forever (kubernetes#99003). TO_BE_DELETED,
// which the undo wrote (manager kubectl, with Update), is not the
// applier's in either case and stays.
func TestFixKeepsLastAppliedWithItsClientSideManager(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	_, _, revision := undoneSeed004(t, f, "testdata/seed004-v2.yaml")

	res := runHygiene(t, f, "audit", "--fix=apply")
	wantExit(t, res, 0)
	framework.WantLines(t, res.Stdout,
		sts+" fixed: last-applied's pod template set to the one that ControllerRevision "+revision+" (revision 3) kept (as field manager kubectl-client-side-apply, which owns last-applied)",
		"1 object fixed, 0 findings left to you.")
	// Sorted: the undo's entry and the controller's status entry come in
	// the order of their times, to the second.
	framework.WantLines(t, framework.SortedLines(k.JSONPath(t, sts, `{range .metadata.managedFields[*]}{.manager}{" "}{.operation}{" "}{.fieldsV1.f:metadata.f:annotations}{"\n"}{end}`)),
		"kube-controller-manager Update ",
		"kubectl Update ",
		`kubectl-client-side-apply Update {".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}`)

	framework.WantLines(t, k.Run(t, "apply", "--server-side", "-f", "testdata/seed004-ssa.yaml").MustSucceed(t).Stdout, sts+" serverside-applied")
	framework.WantLines(t, k.JSONPath(t, sts, "{.spec.template.spec.containers[0].env}"), `[{"name":"TO_BE_DELETED","value":"needs to be deleted!"}]`)
}
