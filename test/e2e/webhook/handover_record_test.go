package webhook_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// An annotation handed over to the person's own kubectl annotate, as the
// denial says: the hand-over records the path on the object
// (apply-hygiene.io/handed-over); the person's next annotate passes; the
// apply of a new image with the annotation dropped from the manifest
// draws no [orphaned-field] on it (without the record it did: a field a
// person set outside apply, in neither the manifest nor last-applied, with
// a command that removes it); kubectl hygiene explain and the audit find
// nothing either. Nor after the move to server-side apply: kubectl apply
// --server-side's migration hands the fields of last-applied's managers to
// the applier, but the record is the hand-over's own field manager's, so
// the applier's next apply, whose manifest does not hold it, keeps it
// (written in last-applied's patch, it was deleted there, and the
// annotation was an orphan again).
func TestHandoverToThePersonsOwnCommandsDrawsNoOrphan(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	next := annotatedAfterHandover(t, f)
	wantNoFinding(t, f)

	for _, image := range []string{"nginx:1.16", "nginx:1.17"} {
		ssa := k.Run(t, "apply", "--server-side", "-f", framework.WriteFile(t, "web.yaml", strings.Replace(next, "nginx:1.15", image, 1), 0o644)).MustSucceed(t)
		framework.WantLines(t, ssa.Stdout, "deployment.apps/web serverside-applied")
		framework.WantLines(t, ssa.Stderr)
	}
	wantRecordAndTeam(t, k, "nginx:1.17")
	wantNoFinding(t, f)
}

// After the same hand-over, the writers that apply server-side under a
// field manager of their own keep the record and draw no
// [orphaned-field] on the annotation handed over: Flux, whose
// kustomize-controller drops last-applied (a JSON patch that removes it)
// and applies server-side through client-go, without kubectl's migration
// of client-side apply's fields; then kubectl apply --server-side
// --field-manager=ci-deployer, whose migration hands those fields to
// ci-deployer, but not the record, which is the hand-over's own
// manager's. The record, the annotation's value and its owner stay;
// explain and the audit find nothing.
func TestHandoverRecordOutlivesOtherServerSideAppliers(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	next := annotatedAfterHandover(t, f)
	cleanUp := k.Run(t, "patch", "deployment/web", "--type=json", "--field-manager=kustomize-controller",
		"-p", `[{"op":"remove","path":"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"}]`).MustSucceed(t)
	framework.WantLines(t, cleanUp.Stdout, "deployment.apps/web patched")
	framework.WantLines(t, cleanUp.Stderr)
	flux := k.ToolApply(t, "/apis/apps/v1/namespaces/"+f.Namespace+"/deployments/web", "kustomize-controller", []byte(strings.Replace(next, "nginx:1.15", "nginx:1.16", 1)))
	if flux.ExitCode != 0 {
		t.Fatalf("Flux's server-side apply failed: %s", flux.Stderr)
	}
	framework.WantLines(t, flux.Stderr)
	wantRecordAndTeam(t, k, "nginx:1.16")

	for _, image := range []string{"nginx:1.16", "nginx:1.17"} {
		ssa := k.Run(t, "apply", "--server-side", "--force-conflicts", "--field-manager=ci-deployer", "-f", framework.WriteFile(t, "web.yaml", strings.Replace(next, "nginx:1.15", image, 1), 0o644)).MustSucceed(t)
		framework.WantLines(t, ssa.Stdout, "deployment.apps/web serverside-applied")
		framework.WantLines(t, ssa.Stderr)
	}
	wantRecordAndTeam(t, k, "nginx:1.17")
	wantNoFinding(t, f)
}

// wantRecordAndTeam checks that deployment/web still records the
// hand-over of its annotation team, which is still "c", owned by the
// hand-over's manager alone, and that its image is image.
func wantRecordAndTeam(t *testing.T, k framework.Kubectl, image string) {
	t.Helper()
	framework.WantLines(t, k.JSONPath(t, "deployment/web", `{.metadata.annotations.apply-hygiene\.io/handed-over} {.metadata.annotations.team} {.spec.template.spec.containers[0].image}`),
		`["metadata.annotations.team"] c `+image)
	wantRecordOwners(t, k, "kubectl-hygiene-handover/Update")
}

// kubectl's own hand-over, as its documentation prescribes: kubectl apply
// edit-last-applied takes the annotation out of last-applied. The mutating
// webhook records the hand-over as kubectl hygiene handover does, quietly
// (a kubectl apply that drops a field the server puts back is the same
// write); the person's kubectl annotate then passes, and the apply of the
// manifest without the annotation draws no [orphaned-field] on it (without
// the record it did, with a command that removes the value the person
// set); explain and the audit find nothing either.
func TestEditLastAppliedHandOverIsRecorded(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/deployment-annotated-v1.yaml").MustSucceed(t)
	editor := framework.WriteFile(t, "editor.sh", "#!/bin/sh\nsed -i '/\"team\": \"a\"/d' \"$1\"\n", 0o755)
	edit := k
	edit.Env = append(append([]string{}, k.Env...), "EDITOR="+editor, "KUBE_EDITOR="+editor)
	// -o json: the editor sees JSON, and kubectl prints the new
	// last-applied, checked below.
	handOver := edit.Run(t, "apply", "edit-last-applied", "deployment/web", "-o", "json").MustSucceed(t)
	framework.WantLines(t, handOver.Stderr)
	framework.WantLines(t, k.JSONPath(t, "deployment/web", `{.metadata.annotations.apply-hygiene\.io/handed-over} {.metadata.annotations.team}`), `["metadata.annotations.team"] a`)
	if la := k.JSONPath(t, "deployment/web", `{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`); strings.Contains(la, "team") {
		t.Fatalf("last-applied still has the annotation: %s", la)
	}

	annotateThenApplyWithout(t, k)
	framework.WantLines(t, k.JSONPath(t, "deployment/web", `{.metadata.annotations.apply-hygiene\.io/handed-over} {.metadata.annotations.team} {.spec.template.spec.containers[0].image}`),
		`["metadata.annotations.team"] c nginx:1.15`)
	wantNoFinding(t, f)
}

// annotatedAfterHandover applies testdata/deployment-annotated-v1.yaml
// (annotation team=a), hands the annotation over with the command that
// the denial of kubectl annotate team=c prints, annotates again (it
// passes), and applies the manifest without the annotation and with
// nginx:1.15, which draws no warning. It returns that manifest.
func annotatedAfterHandover(t *testing.T, f *framework.Framework) string {
	t.Helper()
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/deployment-annotated-v1.yaml").MustSucceed(t)
	denied := k.Run(t, "annotate", "deployment/web", "team=c", "--overwrite").MustFail(t)
	framework.WantLines(t, denied.Stderr, "Error from server (Forbidden): "+framework.DeniedPrefix+
		imperativeDenial(f.Namespace, controlplane.AdminUser, "kubectl-annotate", `metadata.annotations.team (last-applied "a", now "c")`, "metadata.annotations.team"))
	framework.WantLines(t, k.RunPrinted(t, printedHandover(t, denied.Stderr)),
		"Deployment "+f.Namespace+"/web: last-applied no longer has metadata.annotations.team",
		"The next kubectl apply neither sets nor deletes them: they are their new writer's.",
		"Drop them from your manifest too: an apply of a manifest that sets them takes them back.")
	framework.WantLines(t, k.JSONPath(t, "deployment/web", `{.metadata.annotations.apply-hygiene\.io/handed-over}`), `["metadata.annotations.team"]`)

	next := annotateThenApplyWithout(t, k)
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.metadata.annotations.team} {.spec.template.spec.containers[0].image}"), "c nginx:1.15")

	return next
}

// annotateThenApplyWithout is the person's kubectl annotate team=c of
// deployment/web, whose annotation was handed over (it passes without a
// word), then the apply of testdata/deployment-annotated-v1.yaml without
// the annotation and with nginx:1.15 (it draws no warning); it returns
// that manifest.
func annotateThenApplyWithout(t *testing.T, k framework.Kubectl) string {
	t.Helper()
	annotate := k.Run(t, "annotate", "deployment/web", "team=c", "--overwrite").MustSucceed(t)
	framework.WantLines(t, annotate.Stdout, "deployment.apps/web annotated")
	framework.WantLines(t, annotate.Stderr)

	manifest, err := os.ReadFile("testdata/deployment-annotated-v1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	next := strings.Replace(strings.Replace(string(manifest), "  annotations:\n    team: a\n", "", 1), "nginx:1.14.2", "nginx:1.15", 1)
	apply := framework.ApplyPredicted(t, k, framework.WriteFile(t, "web.yaml", next, 0o644)).MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/web configured")
	framework.WantLines(t, apply.Stderr)
	return next
}

// wantRecordOwners checks that deployment/web's record is owned by want
// (manager/operation, space-separated; "" for no one): no applier holds
// it, so no migration to server-side apply moves it.
func wantRecordOwners(t *testing.T, k framework.Kubectl, want string) {
	t.Helper()
	owners := k.JSONPath(t, "deployment/web", `{range .metadata.managedFields[*]}{.manager}/{.operation}={.fieldsV1.f:metadata.f:annotations}{"\n"}{end}`)
	var recordOwners []string
	for _, line := range strings.Split(strings.TrimSpace(owners), "\n") {
		if strings.Contains(line, "apply-hygiene.io/handed-over") {
			recordOwners = append(recordOwners, strings.SplitN(line, "=", 2)[0])
		}
	}
	if strings.Join(recordOwners, " ") != want {
		t.Errorf("the record's owners: %v, want %q\n%s", recordOwners, want, owners)
	}
}

// A label handed over after the Deployment's second revision, then a
// rollout undo to the first: kubectl sets the Deployment's annotations to
// the first ReplicaSet's, which has no record, and keeps last-applied,
// which no longer has the label. apply-hygiene's repair of the undo writes
// the record back as it was, with the repaired last-applied, and the
// next apply of the manifest without the label draws no [orphaned-field]
// on it (without the record it did, with a command that removes the label
// the person was told to hand over); kubectl hygiene explain and the audit
// find nothing either.
func TestRolloutUndoKeepsTheHandoverRecord(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	undo, next := undoAfterHandover(t, f)
	framework.WantLines(t, undo.Stderr,
		undoWarning,
		"Warning: [stale-last-applied] Deployment "+f.Namespace+"/web: rollout undo restored revision 1 but last-applied still described "+
			"the newer manifest; apply-hygiene rewrote last-applied to match revision 1 (kubectl's rollout undo does not), so the next kubectl apply deletes what "+
			"your manifest no longer has. It also put back the record of the field handed over, which the undo dropped. "+
			"Check with: kubectl apply view-last-applied deployments.apps/web -n "+f.Namespace)
	framework.WantLines(t, k.JSONPath(t, "deployment/web", `{.metadata.annotations.apply-hygiene\.io/handed-over} {.metadata.labels.team} {.spec.template.spec.containers[0].image}`),
		`["metadata.labels.team"] c nginx:1.14.2`)
	// kubectl's patch removed the record, which took it from its manager
	// (the API server computes managedFields before admission); the repair
	// put it back unowned, so no migration moves it either.
	wantRecordOwners(t, k, "")
	wantNoOrphanAfter(t, f, next)
}

// Where stale-last-applied only warns, the undo loses the record and the
// rule says so with the kubectl annotate that puts it back, which passes
// the webhook without a word; then the next apply draws no
// [orphaned-field] either (only the revert of the undo's image, which the
// stale last-applied makes).
func TestRolloutUndoToldToWarnPrintsHowToPutTheRecordBack(t *testing.T) {
	framework.Reconfigure(t, "policy.rules.stale-last-applied.action=warn")
	f := framework.New(t)
	k := f.Kubectl
	undo, next := undoAfterHandover(t, f)
	putBack := "kubectl annotate deployments.apps/web -n " + f.Namespace + ` --overwrite 'apply-hygiene.io/handed-over=["metadata.labels.team"]'`
	framework.WantLines(t, undo.Stderr,
		undoWarning,
		"Warning: [stale-last-applied] Deployment "+f.Namespace+"/web: rollout undo restored revision 1 but last-applied still describes the newer manifest, "+
			"so the next kubectl apply will not delete what revision 1 has and your manifest does not (spec.template.spec.containers[name=nginx].image). "+
			"Check with: kubectl apply view-last-applied deployments.apps/web -n "+f.Namespace,
		"Warning: [stale-last-applied] Deployment "+f.Namespace+"/web: rollout undo set the annotations to the restored revision's, dropping the record of the "+
			"fields handed over from kubectl apply (metadata.labels.team); without it they are reported as orphans, and pruned where orphaned-field prunes. "+
			"Put it back with: "+putBack)
	framework.WantLines(t, k.JSONPath(t, "deployment/web", `{.metadata.annotations.apply-hygiene\.io/handed-over} {.metadata.labels.team}`), " c")
	framework.WantLines(t, k.RunPrinted(t, putBack), "deployment.apps/web annotated")
	framework.WantLines(t, k.JSONPath(t, "deployment/web", `{.metadata.annotations.apply-hygiene\.io/handed-over}`), `["metadata.labels.team"]`)
	// last-applied stayed stale (warn): the apply reverts the undo's
	// image, and says so, and only that.
	wantNoOrphanAfter(t, f, next, regexp.QuoteMeta("Warning: [apply-reverts-drift] Deployment "+f.Namespace+"/web: this apply sets "+
		`spec.template.spec.containers[name=nginx].image back to "nginx:1.15", discarding "nginx:1.14.2" set by kubectl at `),
		`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`,
		regexp.QuoteMeta(" since the last apply. To keep that value, put it in your manifest before you apply; see every drifted field with: "+
			"kubectl hygiene explain deployments.apps/web -n "+f.Namespace))
}

// undoWarning is what kubectl itself prints on the undo of an applied
// Deployment.
const undoWarning = "Warning: resource deployments/web was previously managed with 'kubectl apply'. Rolling back will not update the " +
	"kubectl.kubernetes.io/last-applied-configuration annotation, which may cause unexpected behavior on future " +
	"'kubectl apply' operations. Consider using 'kubectl apply' with your previous configuration file instead."

// undoAfterHandover applies deployment/web with the label team=a, then a
// new image (revision 2), hands the label over as the denial of kubectl
// label says, labels it c, and undoes the rollout to revision 1. It
// returns the undo and the manifest of revision 2 without the label.
func undoAfterHandover(t *testing.T, f *framework.Framework) (framework.Result, string) {
	t.Helper()
	k := f.Kubectl
	manifest, err := os.ReadFile("testdata/deployment-annotated-v1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	v1 := strings.Replace(string(manifest), "  annotations:\n    team: a\n", "  labels:\n    team: a\n", 1)
	framework.ApplyPredicted(t, k, framework.WriteFile(t, "web-v1.yaml", v1, 0o644)).MustSucceed(t)
	f.WaitForRevisions(t, "app=web", 1)
	v2 := strings.Replace(v1, "nginx:1.14.2", "nginx:1.15", 1)
	framework.ApplyPredicted(t, k, framework.WriteFile(t, "web-v2.yaml", v2, 0o644)).MustSucceed(t)
	f.WaitForRevisions(t, "app=web", 2)

	denied := k.Run(t, "label", "deployment/web", "team=c", "--overwrite").MustFail(t)
	framework.WantLines(t, denied.Stderr, "Error from server (Forbidden): "+framework.DeniedPrefix+
		imperativeDenial(f.Namespace, controlplane.AdminUser, "kubectl-label", `metadata.labels.team (last-applied "a", now "c")`, "metadata.labels.team"))
	k.RunPrinted(t, printedHandover(t, denied.Stderr))
	framework.WantLines(t, k.Run(t, "label", "deployment/web", "team=c", "--overwrite").MustSucceed(t).Stderr)

	undo := k.Run(t, "rollout", "undo", "deployment/web").MustSucceed(t)
	framework.WantLines(t, undo.Stdout, "deployment.apps/web rolled back")
	return undo, strings.Replace(v2, "  labels:\n    team: a\n", "", 1)
}

// wantNoOrphanAfter applies next (deployment/web at nginx:1.15 without
// the label team) and checks that the apply prints nothing but a line
// that matches drift, if any, that the label stays c, and that explain
// and the audit find nothing.
func wantNoOrphanAfter(t *testing.T, f *framework.Framework, next string, drift ...string) {
	t.Helper()
	k := f.Kubectl
	apply := framework.ApplyPredicted(t, k, framework.WriteFile(t, "web.yaml", next, 0o644)).MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/web configured")
	if len(drift) == 0 {
		framework.WantLines(t, apply.Stderr)
	} else {
		framework.WantMatch(t, apply.Stderr, strings.Join(drift, ""))
	}
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.metadata.labels.team} {.spec.template.spec.containers[0].image}"), "c nginx:1.15")
	wantNoFindingOn(t, f, "metadata.labels.team", "kubectl-label")
}

// wantNoFinding checks that kubectl hygiene explain shows deployment/web's
// team annotation as kubectl-annotate's "c", no orphan, and finds nothing,
// and that the audit finds nothing in the namespace.
func wantNoFinding(t *testing.T, f *framework.Framework) {
	t.Helper()
	wantNoFindingOn(t, f, "metadata.annotations.team", "kubectl-annotate")
}

// wantNoFindingOn checks that kubectl hygiene explain shows the field at
// path of deployment/web as "c", owned by manager (among others), no
// orphan, and finds nothing, and that the audit finds nothing in the
// namespace.
func wantNoFindingOn(t *testing.T, f *framework.Framework, path, manager string) {
	t.Helper()
	explain := f.Hygiene(t, "explain", "deployment/web", "-n", f.Namespace).MustSucceed(t)
	found := false
	for _, line := range strings.Split(strings.TrimSpace(explain.Stdout), "\n") {
		if fields := strings.Fields(line); len(fields) > 0 && fields[0] == path {
			found = true
			if status := fields[len(fields)-1]; len(fields) != 4 || fields[1] != `"c"` || !slices.Contains(strings.Split(fields[2], ","), manager) || strings.Contains(status, "orphan") {
				t.Errorf("kubectl hygiene explain's %s: %s, want \"c\", %s and no orphan", path, line, manager)
			}
		}
	}
	if !found {
		t.Errorf("kubectl hygiene explain shows no %s:\n%s", path, explain.Stdout)
	}
	if !strings.HasSuffix(strings.TrimSpace(explain.Stdout), "\nNo findings.") {
		t.Errorf("kubectl hygiene explain finds something:\n%s", explain.Stdout)
	}
	audit := f.Hygiene(t, "audit", "-n", f.Namespace).MustSucceed(t)
	framework.WantLines(t, audit.Stdout, "No findings in 1 objects.")
}

// kubectl edit --save-config copies every annotation into last-applied,
// the hand-over's record too; the next apply of a manifest without the
// record then deletes it, as it deletes any field that last-applied has
// and the manifest lacks (adversarial review: the person's next annotate
// of the field handed over was reported as an orphan again). The mutating
// webhook writes the record back in that apply, quietly; the person's
// annotates pass, and the apply after them draws no [orphaned-field].
func TestApplyAfterASaveConfigKeepsTheRecord(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	next := annotatedAfterHandover(t, f)
	editor := framework.WriteFile(t, "editor.sh", "#!/bin/sh\nsed -i 's/^  annotations:$/  annotations:\\n    edited: \"yes\"/' \"$1\"\n", 0o755)
	edit := k
	edit.Env = append(append([]string{}, k.Env...), "EDITOR="+editor, "KUBE_EDITOR="+editor)
	saved := edit.Run(t, "edit", "deployment/web", "--save-config").MustSucceed(t)
	framework.WantLines(t, saved.Stdout, "deployment.apps/web edited")
	if la := k.JSONPath(t, "deployment/web", `{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`); !strings.Contains(la, "apply-hygiene.io/handed-over") {
		t.Fatalf("kubectl edit --save-config left last-applied without the record: %s", la)
	}

	apply := framework.ApplyPredicted(t, k, framework.WriteFile(t, "web.yaml", next, 0o644)).MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/web configured")
	framework.WantLines(t, apply.Stderr)
	framework.WantLines(t, k.JSONPath(t, "deployment/web", `{.metadata.annotations.apply-hygiene\.io/handed-over} {.metadata.annotations.edited}`), `["metadata.annotations.team"] `)

	for _, team := range []string{"team=d", "team=c"} {
		annotate := k.Run(t, "annotate", "deployment/web", team, "--overwrite").MustSucceed(t)
		framework.WantLines(t, annotate.Stderr)
	}
	again := framework.ApplyPredicted(t, k, framework.WriteFile(t, "web.yaml", strings.Replace(next, "nginx:1.15", "nginx:1.16", 1), 0o644)).MustSucceed(t)
	framework.WantLines(t, again.Stdout, "deployment.apps/web configured")
	framework.WantLines(t, again.Stderr)
	framework.WantLines(t, k.JSONPath(t, "deployment/web", `{.metadata.annotations.apply-hygiene\.io/handed-over} {.metadata.annotations.team} {.spec.template.spec.containers[0].image}`),
		`["metadata.annotations.team"] c nginx:1.16`)
	wantNoFinding(t, f)
}
