package audit_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// handWorkload is a workload of seed 004's story whose v1 and v2 differ in
// the image and in the env var TO_BE_DELETED, which v2 drops.
type handWorkload struct {
	kind, object, selector, v1, v2 string
	v1Image, v2Image               string
}

const (
	toBeDeletedPath = "spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]"
)

var (
	handDeployment = handWorkload{kind: "Deployment", object: "deployment.apps/undone", selector: "app=undone",
		v1: "testdata/deployment-v1.yaml", v2: "testdata/deployment-v2.yaml", v1Image: "nginx:1.14.2", v2Image: "nginx:1.16.1"}
	handStatefulSet = handWorkload{kind: "StatefulSet", object: sts, selector: "app=my-wonderhoy-app",
		v1: "testdata/seed004-v1.yaml", v2: "testdata/seed004-v2.yaml", v1Image: "nginx:latest", v2Image: "nginx:a-broken-version"}
)

// restoreByEdit puts v1's image and TO_BE_DELETED back with kubectl edit:
// an editor script changes the YAML lines only, as a person does (the
// last-applied JSON in the editor keeps v2's values).
func restoreByEdit(t *testing.T, f *framework.Framework, w handWorkload) {
	t.Helper()
	editor := framework.WriteFile(t, "editor.sh", fmt.Sprintf(`#!/bin/sh
sed -i -e 's/^\( *\)image: %s$/\1image: %s/' \
  -e 's/^\( *\)- name: ANOTHER_ENV$/\1- name: TO_BE_DELETED\n\1  value: needs to be deleted!\n\1- name: ANOTHER_ENV/' "$1"
`, w.v2Image, w.v1Image), 0o755)
	k := f.Kubectl
	k.Env = []string{"EDITOR=" + editor, "KUBE_EDITOR=" + editor}
	framework.WantLines(t, k.Run(t, "edit", w.object).MustSucceed(t).Stdout, w.object+" edited")
}

// restoreByPatch puts v1's image and env back with kubectl patch.
func restoreByPatch(t *testing.T, f *framework.Framework, w handWorkload) {
	t.Helper()
	framework.WantLines(t, f.Kubectl.Run(t, "patch", w.object, "--type=json", "-p", `[`+
		`{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"`+w.v1Image+`"},`+
		`{"op":"replace","path":"/spec/template/spec/containers/0/env","value":[`+
		`{"name":"TO_BE_DELETED","value":"needs to be deleted!"},{"name":"ANOTHER_ENV","value":"who cares?"}]}]`).MustSucceed(t).Stdout,
		w.object+" patched")
}

// A hand edit that puts v1's pod template back after the v2 apply makes
// the controller restore v1's revision as an undo does, but it is no
// undo: managedFields name kubectl-edit or kubectl-patch, not kubectl's
// Update without field manager. The audit reports the edit as it reports
// any hand edit (the image an imperative edit, TO_BE_DELETED an orphan),
// no stale-last-applied, and --fix=apply fixes what it fixes for any hand
// edit (it removes the orphan) and leaves last-applied at v2's. A real
// rollout undo of the same story is still repaired
// (TestFixRebuildsLastAppliedOfAnUndoneDeployment,
// TestFixRepairsLastAppliedThatAnUndoLeftStale).
func TestFixLeavesLastAppliedOfAHandEditThatRestoredARevision(t *testing.T) {
	tests := map[string]struct {
		w       handWorkload
		restore func(t *testing.T, f *framework.Framework, w handWorkload)
		// manager is the field manager the findings name.
		manager string
	}{
		"Deployment, kubectl edit":   {w: handDeployment, restore: restoreByEdit, manager: "kubectl-edit"},
		"Deployment, kubectl patch":  {w: handDeployment, restore: restoreByPatch, manager: "kubectl-patch"},
		"StatefulSet, kubectl edit":  {w: handStatefulSet, restore: restoreByEdit, manager: "kubectl-edit"},
		"StatefulSet, kubectl patch": {w: handStatefulSet, restore: restoreByPatch, manager: "kubectl-patch"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := framework.New(t)
			k := f.Kubectl
			k.Run(t, "apply", "-f", tc.w.v1).MustSucceed(t)
			f.WaitForRevisions(t, tc.w.selector, 1)
			k.Run(t, "apply", "-f", tc.w.v2).MustSucceed(t)
			f.WaitForRevisions(t, tc.w.selector, 2)
			v2 := k.JSONPath(t, tc.w.object, lastAppliedExpr)
			tc.restore(t, f, tc.w)
			waitForRestoredRevision(t, f, tc.w)

			short := strings.Replace(tc.w.object, ".apps/", "/", 1)
			kind, name, _ := strings.Cut(short, "/")
			subject := fmt.Sprintf("%s %s/%s", tc.w.kind, f.Namespace, name)
			manager := tc.manager

			res := runHygiene(t, f, "audit")
			wantExit(t, res, 1)
			if strings.Contains(res.Stdout, "stale-last-applied") {
				t.Errorf("audit reports stale-last-applied for a hand edit:\n%s", res.Stdout)
			}
			// The table's columns are padded to the namespace's length.
			var table []string
			for _, line := range strings.Split(res.Stdout, "\n") {
				table = append(table, strings.Join(strings.Fields(line), " "))
			}
			row := f.Namespace + " " + tc.w.kind + "/" + name
			framework.WantMatch(t, strings.Join(table, "\n"),
				"NAMESPACE OBJECT RULE ACTION PATH",
				regexp.QuoteMeta(row+" imperative-edit deny "+imagePath),
				regexp.QuoteMeta(row+" orphaned-field warn "+toBeDeletedPath),
				"",
				regexp.QuoteMeta("[imperative-edit] "+subject+": "+imagePath+" was changed outside kubectl apply by "+manager+" at ")+
					`\S+`+regexp.QuoteMeta(fmt.Sprintf(` (last-applied %q, now %q); the next kubectl apply puts the last-applied value back without a word.`, tc.w.v2Image, tc.w.v1Image))+".*",
				regexp.QuoteMeta("[orphaned-field] "+subject+": "+toBeDeletedPath+` ({"name":"TO_BE_DELETED","value":"needs to be deleted!"}, set by `+manager+" at ")+".*")
			framework.WantLines(t, res.Stderr, append(slices.Clone(noInstallation), "error: 1 finding(s) with the action deny")...)

			res = runHygiene(t, f, "audit", "--fix=apply")
			wantExit(t, res, 1)
			framework.WantLines(t, res.Stdout,
				tc.w.object+" fixed: removed "+toBeDeletedPath+" (rolls the pods)",
				tc.w.object+" not fixed: imperative-edit "+imagePath+"; fix it with: kubectl hygiene handover "+kind+"s.apps/"+name+" -n "+f.Namespace+" '"+imagePath+"'",
				"1 object fixed, 1 finding left to you.")
			framework.WantLines(t, res.Stderr, append(slices.Clone(noInstallation), "error: 1 finding(s) with the action deny")...)
			if got := k.JSONPath(t, tc.w.object, lastAppliedExpr); got != v2 {
				t.Errorf("last-applied after audit --fix=apply:\n%s\nwant v2's, as the hand edit left it:\n%s", got, v2)
			}
		})
	}
}

// waitForRestoredRevision waits until the controller has renumbered the
// revision of v1's template to 3, as after an undo.
func waitForRestoredRevision(t *testing.T, f *framework.Framework, w handWorkload) {
	t.Helper()
	if w.object == sts {
		restoredRevision(t, f)
		return
	}
	framework.Eventually(t, 30*time.Second, "v1's ReplicaSet renumbered to 3", func(context.Context) (bool, error) {
		numbers := f.Kubectl.JSONPath(t, "replicasets", `{range .items[*]}{.metadata.annotations.deployment\.kubernetes\.io/revision}{" "}{end}`)
		return slices.Contains(strings.Fields(numbers), "3"), nil
	})
}
