package audit_test

import (
	"cmp"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Seed 004 undone before apply-hygiene was installed: audit --fix shows
// the repair of last-applied and writes nothing; --fix=apply writes the
// last-applied that the restored ControllerRevision kept, so the next
// apply of a manifest without TO_BE_DELETED deletes it.
func TestFixRepairsLastAppliedThatAnUndoLeftStale(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	v1, v2, revision := undoneSeed004(t, f, "testdata/seed004-v2.yaml")

	res := runHygiene(t, f, "audit", "--fix")
	wantExit(t, res, 0)
	framework.WantLines(t, res.Stdout, append(append(
		[]string{sts + " fixed (dry run): last-applied's pod template set to the one that ControllerRevision " + revision + " (revision 3) kept"},
		seed004Diff...),
		"Dry run: nothing was written; 0 findings left to you. Write the fixes with --fix=apply.")...)
	if got := k.JSONPath(t, sts, lastAppliedExpr); got != v2 {
		t.Errorf("the dry run wrote last-applied:\n%s\nwant it left at v2's:\n%s", got, v2)
	}

	res = runHygiene(t, f, "audit", "--fix=apply")
	wantExit(t, res, 0)
	framework.WantLines(t, res.Stdout,
		sts+" fixed: last-applied's pod template set to the one that ControllerRevision "+revision+" (revision 3) kept (as field manager kubectl-client-side-apply, which owns last-applied)",
		"1 object fixed, 0 findings left to you.")
	if got := k.JSONPath(t, sts, lastAppliedExpr); got != v1 {
		t.Errorf("last-applied after the fix:\n%s\nwant v1's:\n%s", got, v1)
	}
	framework.WantLines(t, runHygiene(t, f, "audit").Stdout, "No findings in 1 objects.")

	framework.WantLines(t, k.Run(t, "apply", "-f", "testdata/seed004-v3.yaml").MustSucceed(t).Stdout, sts+" configured")
	framework.WantLines(t, k.JSONPath(t, sts, "{.spec.template.spec.containers[0].env}"), `[{"name":"ANOTHER_ENV","value":"who cares?"}]`)
	framework.WantLines(t, k.JSONPath(t, sts, lastAppliedExpr),
		`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"annotations":{},"labels":{"app":"my-wonderhoy-app"},"name":"my-wonderhoy-app","namespace":"`+f.Namespace+`"},`+
			`"spec":{"replicas":3,"selector":{"matchLabels":{"app":"my-wonderhoy-app"}},"serviceName":"my-wonderhoy-app","template":{"metadata":{"labels":{"app":"my-wonderhoy-app"}},`+
			`"spec":{"containers":[{"env":[{"name":"ANOTHER_ENV","value":"who cares?"}],"image":"nginx:a-fixed-version","name":"nginx"}]}}}}`)
}

// Seed 004 undone before apply-hygiene was installed, with a v2 that also
// set minReadySeconds: --fix=apply takes only the pod template from the
// revision's manifest and keeps minReadySeconds, so the next apply of v3,
// which drops it, deletes it.
func TestFixKeepsWhatTheUndoDidNotRestore(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	v1, _, revision := undoneSeed004(t, f, "testdata/seed004-minready-v2.yaml")

	res := runHygiene(t, f, "audit", "--fix=apply")
	wantExit(t, res, 0)
	framework.WantLines(t, res.Stdout,
		sts+" fixed: last-applied's pod template set to the one that ControllerRevision "+revision+" (revision 3) kept (as field manager kubectl-client-side-apply, which owns last-applied)",
		"1 object fixed, 0 findings left to you.")
	want := strings.Replace(v1, `"spec":{"replicas":3,`, `"spec":{"minReadySeconds":10,"replicas":3,`, 1)
	if got := k.JSONPath(t, sts, lastAppliedExpr); got != want || want == v1 {
		t.Errorf("last-applied after the fix:\n%s\nwant v1's with minReadySeconds: 10:\n%s", got, want)
	}

	framework.WantLines(t, k.Run(t, "apply", "-f", "testdata/seed004-v3.yaml").MustSucceed(t).Stdout, sts+" configured")
	framework.WantLines(t, k.JSONPath(t, sts, "{.spec.minReadySeconds}"))
	framework.WantLines(t, k.JSONPath(t, sts, "{.spec.template.spec.containers[0].env}"), `[{"name":"ANOTHER_ENV","value":"who cares?"}]`)
}

// seed004Diff is the dry run's diff of last-applied: v2's, with the
// broken image and without TO_BE_DELETED, becomes v1's.
var seed004Diff = []string{
	"--- " + sts + " last-applied (live)",
	"+++ " + sts + " last-applied (fixed)",
	"@@ -28,11 +28,15 @@",
	"           {",
	`             "env": [`,
	"               {",
	`+                "name": "TO_BE_DELETED",`,
	`+                "value": "needs to be deleted!"`,
	"+              },",
	"+              {",
	`                 "name": "ANOTHER_ENV",`,
	`                 "value": "who cares?"`,
	"               }",
	"             ],",
	`-            "image": "nginx:a-broken-version",`,
	`+            "image": "nginx:latest",`,
	`             "name": "nginx"`,
	"           }",
	"         ]",
}

// restoredRevision waits until the StatefulSet controller has renumbered
// the ControllerRevision that the undo restored to 3, and returns its
// name.
// undoneSeed004 applies seed 004's v1 and then v2File, undoes to revision
// 1 and returns last-applied after each apply and the name of the
// ControllerRevision the undo restored.
func undoneSeed004(t *testing.T, f *framework.Framework, v2File string) (v1, v2, revision string) {
	t.Helper()
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/seed004-v1.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=my-wonderhoy-app", 1)
	v1 = k.JSONPath(t, sts, lastAppliedExpr)
	k.Run(t, "apply", "-f", v2File).MustSucceed(t)
	f.WaitForRevisions(t, "app=my-wonderhoy-app", 2)
	v2 = k.JSONPath(t, sts, lastAppliedExpr)
	k.Run(t, "rollout", "undo", sts, "--to-revision=1").MustSucceed(t)
	return v1, v2, restoredRevision(t, f)
}

func restoredRevision(t *testing.T, f *framework.Framework) string {
	t.Helper()
	var name string
	framework.Eventually(t, 30*time.Second, "the restored ControllerRevision renumbered to 3", func(context.Context) (bool, error) {
		name = f.Kubectl.JSONPath(t, "controllerrevisions", `{range .items[?(@.revision==3)]}{.metadata.name}{end}`)
		return name != "", nil
	})
	return name
}

// A Deployment restarted and then applied again keeps restartedAt: the
// dry run shows its removal as a diff of the object and writes nothing;
// --fix=apply removes it and says that the pods roll, and the next apply
// of the same manifest changes nothing. A Deployment made by kubectl
// create is left to the user, with the command of its finding.
func TestFixRemovesRestartedAtAndSaysThePodsRoll(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/web.yaml").MustSucceed(t)
	k.Run(t, "rollout", "restart", "deployment/web").MustSucceed(t)
	k.Run(t, "apply", "-f", "testdata/web.yaml").MustSucceed(t)
	k.Run(t, "create", "deployment", "made", "--image=nginx:1.14.2", "--replicas=0").MustSucceed(t)
	restartedAt := k.JSONPath(t, "deployment/web", restartedAtExpr)
	generation := k.JSONPath(t, "deployment/web", "{.metadata.generation}")
	notFixed := "deployment.apps/made not fixed: missing-last-applied metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]; " +
		"fix it with: kubectl apply set-last-applied -f <manifest> --create-annotation"

	res := runHygiene(t, f, "audit", "--fix")
	wantExit(t, res, 0)
	framework.WantLines(t, res.Stdout, append(append(
		[]string{"deployment.apps/web fixed (dry run): removed " + restartedAtPath + " (rolls the pods)"},
		restartDiff(restartedAt)...),
		notFixed,
		"Dry run: nothing was written; 1 finding left to you. Write the fixes with --fix=apply.")...)
	// kube-controller-manager writes the Deployment's status meanwhile, so
	// resourceVersion is no witness; the fix would change the template.
	if got := k.JSONPath(t, "deployment/web", restartedAtExpr); got != restartedAt {
		t.Errorf("the dry run wrote: restartedAt %q, want %q", got, restartedAt)
	}
	if got := k.JSONPath(t, "deployment/web", "{.metadata.generation}"); got != generation {
		t.Errorf("the dry run wrote: generation %s, want %s", got, generation)
	}

	res = runHygiene(t, f, "audit", "--fix=apply")
	wantExit(t, res, 0)
	framework.WantLines(t, res.Stdout,
		"deployment.apps/web fixed: removed "+restartedAtPath+" (rolls the pods)",
		notFixed,
		"1 object fixed, 1 finding left to you.")
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.template.metadata}"), `{"labels":{"app":"web"}}`)
	if got := k.JSONPath(t, "deployment/web", "{.metadata.generation}"); got == generation {
		t.Errorf("generation stayed %s: the pod template did not change", got)
	}
	framework.WantLines(t, k.Run(t, "apply", "-f", "testdata/web.yaml").MustSucceed(t).Stdout, "deployment.apps/web unchanged")
}

// restartDiff is the dry run's diff of Deployment web's YAML (without
// status and managedFields): restartedAt, and with it the template's
// annotations, go.
func restartDiff(restartedAt string) []string {
	return []string{
		"--- deployment.apps/web (live)",
		"+++ deployment.apps/web (fixed)",
		"@@ -23,8 +23,6 @@",
		"     type: RollingUpdate",
		"   template:",
		"     metadata:",
		"-      annotations:",
		`-        kubectl.kubernetes.io/restartedAt: "` + restartedAt + `"`,
		"       labels:",
		"         app: web",
		"     spec:",
	}
}

// A change between the audit's read and its write makes the guarded
// patch fail: the error names the object, nothing is written, the exit
// status is 1. A new value of the orphan fails its own test; an apply that
// takes the field into the manifest, with the same value, fails the test
// of last-applied. The audit run again judges the object as it is now.
func TestFixLeavesAnObjectChangedSinceTheAudit(t *testing.T) {
	const changed = "2001-01-01T00:00:00Z"
	tests := map[string]struct {
		// change changes Deployment web while the command waits.
		change func(t *testing.T, f *framework.Framework, restartedAt string)
		// restartedAt is its value afterwards ("" for the one it had).
		restartedAt string
		// again is what audit --fix=apply prints when run again.
		again []string
	}{
		"restartedAt set to another value": {
			change: func(t *testing.T, f *framework.Framework, _ string) {
				f.Kubectl.Run(t, "patch", "deployment/web", "--type=merge",
					"-p", `{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"`+changed+`"}}}}}`).MustSucceed(t)
			},
			restartedAt: changed,
			again:       []string{"deployment.apps/web fixed: removed " + restartedAtPath + " (rolls the pods)", "1 object fixed, 0 findings left to you."},
		},
		"restartedAt taken into the manifest and applied, with the same value": {
			change: func(t *testing.T, f *framework.Framework, restartedAt string) {
				manifest, err := os.ReadFile("testdata/web.yaml")
				if err != nil {
					t.Fatal(err)
				}
				adopted := strings.Replace(string(manifest), "      labels:\n        app: web\n    spec:",
					"      annotations:\n        kubectl.kubernetes.io/restartedAt: \""+restartedAt+"\"\n      labels:\n        app: web\n    spec:", 1)
				f.Kubectl.RunWithInput(t, adopted, "apply", "-f", "-").MustSucceed(t)
			},
			again: []string{"Nothing to fix."},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := framework.New(t)
			k := f.Kubectl
			k.Run(t, "apply", "-f", "testdata/web.yaml").MustSucceed(t)
			k.Run(t, "rollout", "restart", "deployment/web").MustSucceed(t)
			k.Run(t, "apply", "-f", "testdata/web.yaml").MustSucceed(t)
			restartedAt := k.JSONPath(t, "deployment/web", restartedAtExpr)
			wantAfter := cmp.Or(tc.restartedAt, restartedAt)

			res := runPaused(t, f, func() { tc.change(t, f, restartedAt) }, "audit", "--fix=apply")
			wantExit(t, res, 1)
			framework.WantLines(t, res.Stderr, append(slices.Clone(noInstallation),
				pausedLine,
				"error: deployment.apps/web was not fixed: it changed since the audit read it; nothing was written to it. Run the audit again to see it as it is now",
				"error: 1 object of 1 not fixed")...)
			framework.WantLines(t, res.Stdout, "0 objects fixed, 0 findings left to you.")
			framework.WantLines(t, k.JSONPath(t, "deployment/web", restartedAtExpr), wantAfter)

			res = runHygiene(t, f, "audit", "--fix=apply")
			wantExit(t, res, 0)
			framework.WantLines(t, res.Stdout, tc.again...)
		})
	}
}

// A Deployment undone before apply-hygiene was installed: ReplicaSets
// carry no last-applied, so --fix=apply rebuilds it for the restored
// template (the undo's change applied to the stale one), which is v1's
// with TO_BE_DELETED's name alone; the next apply of v3 deletes
// TO_BE_DELETED.
func TestFixRebuildsLastAppliedOfAnUndoneDeployment(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	const deploy = "deployment.apps/undone"
	k.Run(t, "apply", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=undone", 1)
	v1 := k.JSONPath(t, deploy, lastAppliedExpr)
	first := k.JSONPath(t, "replicasets", "{.items[0].metadata.name}")
	k.Run(t, "apply", "-f", "testdata/deployment-v2.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=undone", 2)
	k.Run(t, "rollout", "undo", deploy, "--to-revision=1").MustSucceed(t)
	framework.Eventually(t, 30*time.Second, "ReplicaSet "+first+" renumbered to 3", func(context.Context) (bool, error) {
		return k.JSONPath(t, "replicaset/"+first, `{.metadata.annotations.deployment\.kubernetes\.io/revision}`) == "3", nil
	})

	res := runHygiene(t, f, "audit", "--fix=apply")
	wantExit(t, res, 0)
	framework.WantLines(t, res.Stdout,
		deploy+" fixed: last-applied rebuilt for the pod template of ReplicaSet "+first+" (revision 3) (as field manager kubectl-client-side-apply, which owns last-applied)",
		"1 object fixed, 0 findings left to you.")
	// The v2 apply deleted TO_BE_DELETED: that proves its name, not its
	// value (the restored one may be a person's).
	want := strings.Replace(v1, `{"name":"TO_BE_DELETED","value":"needs to be deleted!"}`, `{"name":"TO_BE_DELETED"}`, 1)
	if got := k.JSONPath(t, deploy, lastAppliedExpr); got != want || want == v1 {
		t.Errorf("last-applied after the fix:\n%s\nwant v1's with TO_BE_DELETED's name alone:\n%s", got, want)
	}

	framework.WantLines(t, k.Run(t, "apply", "-f", "testdata/deployment-v3.yaml").MustSucceed(t).Stdout, deploy+" configured")
	framework.WantLines(t, k.JSONPath(t, deploy, "{.spec.template.spec.containers[0].env}"), `[{"name":"ANOTHER_ENV","value":"who cares?"}]`)
	framework.WantLines(t, k.JSONPath(t, deploy, "{.spec.template.spec.containers[0].image}"), "nginx:1.17.0")
}
