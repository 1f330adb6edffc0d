package audit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// finding is what the test pins of a finding: rule, object and path.
type finding struct {
	Rule, Action, Kind, Name, Path string
}

// Drift planted on purpose among 200 clean objects: audit finds it all and
// nothing else, with admission's rule IDs, and exits 1 for the deny.
func TestAuditFindsPlantedDrift(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	start := time.Now()

	k.Run(t, "apply", "-f", cleanObjects(t, 100)).MustSucceed(t)

	// kubectl edit of a field that last-applied owns.
	web := "testdata/web.yaml"
	k.Run(t, "apply", "-f", web).MustSucceed(t)
	f.WaitForRevisions(t, "app=web", 1)
	// Only the image line: the last-applied JSON shown in the editor keeps
	// its "image":"nginx:1.14.2", as a person who edits the field would.
	editor := framework.WriteFile(t, "editor.sh", "#!/bin/sh\nsed -i 's/image: nginx:1.14.2/image: nginx:1.99/' \"$1\"\n", 0o755)
	edit := k
	edit.Env = []string{"EDITOR=" + editor, "KUBE_EDITOR=" + editor}
	edit.Run(t, "edit", "deployment/web").MustSucceed(t)

	// kubectl rollout restart, then the same manifest applied again.
	restarted := filepath.Join(t.TempDir(), "restarted.yaml")
	writeRenamed(t, web, restarted, "restarted")
	k.Run(t, "apply", "-f", restarted).MustSucceed(t)
	k.Run(t, "rollout", "restart", "deployment/restarted").MustSucceed(t)
	k.Run(t, "apply", "-f", restarted).MustSucceed(t)

	// Seed 004: apply v1, v2, then undo to revision 1.
	k.Run(t, "apply", "-f", seeds+"seed004-v1.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=my-wonderhoy-app", 1)
	k.Run(t, "apply", "-f", seeds+"seed004-v2.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=my-wonderhoy-app", 2)
	k.Run(t, "rollout", "undo", "statefulset/my-wonderhoy-app", "--to-revision=1").MustSucceed(t)

	// kubectl create: no last-applied.
	k.Run(t, "create", "deployment", "created", "--image=nginx:1.14.2", "--replicas=0").MustSucceed(t)

	// Another tool's object (made under Helm's field manager) that a
	// person only restarted, labelled and scaled with kubectl: no
	// last-applied either, but no manifest of the person's to record, so
	// no missing-last-applied (there was one before merge's KubectlMade).
	k.Run(t, "create", "deployment", "helmed", "--image=nginx:1.14.2", "--replicas=0", "--field-manager=helm").MustSucceed(t)
	k.Run(t, "rollout", "restart", "deployment/helmed").MustSucceed(t)
	k.Run(t, "label", "deployment/helmed", "team=a").MustSucceed(t)
	k.Run(t, "scale", "deployment/helmed", "--replicas=0").MustSucceed(t)
	// A Deployment a person made with kubectl create and Helm then adopted:
	// Helm adopts only an object that names its release, and a chart that
	// matches the object writes nothing. It is Helm's: no manifest of the
	// person's to record either.
	k.Run(t, "create", "deployment", "adopted", "--image=nginx:1.14.2", "--replicas=0").MustSucceed(t)
	k.Run(t, "annotate", "deployment/adopted", "meta.helm.sh/release-name=adopted", "meta.helm.sh/release-namespace="+f.Namespace).MustSucceed(t)
	k.Run(t, "label", "deployment/adopted", "app.kubernetes.io/managed-by=Helm").MustSucceed(t)
	t.Logf("planted in %v", time.Since(start).Round(time.Millisecond))

	res := f.Hygiene(t, "audit", "-A", "-o", "json")
	if res.ExitCode != 1 {
		t.Errorf("audit exited %d, want 1 for the deny; stderr:\n%s", res.ExitCode, res.Stderr)
	}
	want := []finding{
		{"missing-last-applied", "warn", "Deployment", "created", lastAppliedPath},
		{"orphaned-field", "warn", "Deployment", "restarted", restartedAtPath},
		{"imperative-edit", "deny", "Deployment", "web", imagePath},
		{"stale-last-applied", "repair", "StatefulSet", "my-wonderhoy-app", lastAppliedPath},
	}
	if diff := cmp.Diff(want, findingsOf(t, f, res.Stdout)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}

	// With imperative-edit configured to warn, nothing is a deny.
	config := framework.WriteFile(t, "policy.yaml", "rules:\n  imperative-edit:\n    action: warn\n", 0o644)
	res = f.Hygiene(t, "audit", "-n", f.Namespace, "--policy-config", config)
	if res.ExitCode != 0 {
		t.Errorf("audit with imperative-edit: warn exited %d, want 0; stderr:\n%s", res.ExitCode, res.Stderr)
	}
	if row := "Deployment/web imperative-edit warn " + imagePath; !strings.Contains(strings.Join(strings.Fields(res.Stdout), " "), row) {
		t.Errorf("table does not show imperative-edit as warn:\n%s", res.Stdout)
	}

	// explain reads the StatefulSet from the cluster: TO_BE_DELETED is an
	// orphan that the undo (field manager kubectl) put back.
	res = f.Hygiene(t, "explain", "statefulset/my-wonderhoy-app", "-n", f.Namespace)
	if res.ExitCode != 0 {
		t.Fatalf("explain exited %d; stderr:\n%s", res.ExitCode, res.Stderr)
	}
	var got []string
	for _, line := range strings.Split(res.Stdout, "\n") {
		if strings.Contains(line, "TO_BE_DELETED") && !strings.Contains(line, ": [") {
			got = append(got, strings.Join(strings.Fields(line), " "))
		}
	}
	wantLines := []string{
		`spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED].name "TO_BE_DELETED" kubectl orphan`,
		`spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED].value "needs to be deleted!" kubectl orphan`,
	}
	if diff := cmp.Diff(wantLines, got); diff != "" {
		t.Errorf("explain's TO_BE_DELETED lines (-want +got):\n%s\n%s", diff, res.Stdout)
	}
	t.Logf("whole test in %v", time.Since(start).Round(time.Millisecond))
}

// findingsOf decodes audit's JSON and checks each message names its rule
// and object.
func findingsOf(t *testing.T, f *framework.Framework, stdout string) []finding {
	t.Helper()
	got := []finding{}
	for _, x := range framework.ParseAuditFindings(t, stdout) {
		if x.Object.Namespace != f.Namespace || x.Object.APIVersion != "apps/v1" {
			t.Errorf("finding on an object the test did not plant: %+v", x.Object)
		}
		prefix := "[" + x.Rule + "] " + x.Object.Kind + " " + f.Namespace + "/" + x.Object.Name + ": "
		if !strings.HasPrefix(x.Message, prefix) {
			t.Errorf("message %q does not start with %q", x.Message, prefix)
		}
		got = append(got, finding{x.Rule, x.Action, x.Object.Kind, x.Object.Name, x.Path})
	}
	return got
}

// writeRenamed copies the manifest from to to, with every "web" renamed.
func writeRenamed(t *testing.T, from, to, name string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	renamed := strings.ReplaceAll(string(data), ": web", ": "+name)
	if err := os.WriteFile(to, []byte(renamed), 0o644); err != nil {
		t.Fatal(err)
	}
}
