package auditverb

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/clitest"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// auditFixFiles are the fake cluster of the audit --fix tests: seed 004
// undone (stale last-applied, repaired from its ControllerRevision), a
// Deployment restarted and applied again (restartedAt orphaned) and one
// made by kubectl create (missing last-applied: nothing to fix).
var auditFixFiles = []string{
	"testdata/seed004/live.yaml", "testdata/seed004/controllerrevisions.yaml",
	"testdata/auditfix/restarted.yaml", "testdata/cluster/deployment-created.yaml",
	"testdata/auditfix/namespaces.yaml",
}

// The dry run prints each fix as a diff and the findings left to the user,
// and writes nothing.
func TestAuditFixDryRun(t *testing.T) {
	for name, args := range map[string][]string{
		"--fix alone is a dry run": {"-A", "--fix"},
		"--fix=dry-run":            {"-A", "--fix=dry-run"},
	} {
		t.Run(name, func(t *testing.T) {
			connect := clitest.FakeCluster(t, auditFixFiles...)
			before := clusterObjects(t, connect)
			stdout, stderr, code := run(t, connect, args...)
			if code != cli.ExitOK || stderr != clitest.NoInstallation {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			clitest.Golden(t, "testdata/auditfix/dry-run.txt", stdout, *update)
			if diff := cmp.Diff(before, clusterObjects(t, connect)); diff != "" {
				t.Errorf("the dry run changed the cluster (-before +after):\n%s", diff)
			}
		})
	}
}

// --fix=apply writes the repaired last-applied and removes the orphan,
// one line per object, and changes nothing else.
func TestAuditFixApply(t *testing.T) {
	connect := clitest.FakeCluster(t, auditFixFiles...)
	before := clusterObjects(t, connect)
	stdout, stderr, code := run(t, connect, "-A", "--fix=apply")
	if code != cli.ExitOK || stderr != clitest.NoInstallation {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	want := []string{
		"statefulset.apps/my-wonderhoy-app (namespace default) fixed: last-applied's pod template set to the one that ControllerRevision my-wonderhoy-app-946448b85 (revision 1) kept (as field manager kubectl-client-side-apply, which owns last-applied)",
		"deployment.apps/web (namespace shop) fixed: removed spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt] (rolls the pods)",
		"deployment.apps/made (namespace shop) not fixed: missing-last-applied metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]; fix it with: kubectl apply set-last-applied -f <manifest> --create-annotation",
		"2 objects fixed, 1 finding left to you.",
	}
	after := clusterObjects(t, connect)
	sts := "default/StatefulSet/my-wonderhoy-app"
	revision := before["default/ControllerRevision/my-wonderhoy-app-946448b85"]
	_ = unstructured.SetNestedField(before[sts].Object, revision.GetAnnotations()[merge.LastAppliedAnnotation], "metadata", "annotations", merge.LastAppliedAnnotation)
	unstructured.RemoveNestedField(before["shop/Deployment/web"].Object, "spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt")
	if diff := cmp.Diff(asJSON(t, before), asJSON(t, after)); diff != "" {
		t.Errorf("objects after the fix (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(strings.Join(want, "\n")+"\n", stdout); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestAuditFixBadFlags(t *testing.T) {
	tests := map[string]struct {
		args    []string
		wantErr string
	}{
		"an unknown mode": {args: []string{"--fix=now"}, wantErr: `--fix must be "dry-run" or "apply", not "now"`},
		"with -o json":    {args: []string{"--fix", "-o", "json"}, wantErr: "--fix prints diffs and lines, not json: leave out --output"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := run(t, clitest.FakeCluster(t), tc.args...)
			if code != cli.ExitBadInput || stdout != "" || !strings.Contains(stderr, tc.wantErr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, stdout, stderr, cli.ExitBadInput, tc.wantErr)
			}
		})
	}
}

// asJSON decodes the JSON of objs, so that numbers compare as numbers
// whether the fake client decoded them as int64 or float64.
func asJSON(t *testing.T, objs map[string]*unstructured.Unstructured) map[string]any {
	t.Helper()
	raw, err := json.Marshal(objs)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// clusterObjects reads every object of the fake cluster, by
// namespace/kind/name.
func clusterObjects(t *testing.T, connect cluster.ConnectFunc) map[string]*unstructured.Unstructured {
	t.Helper()
	c, err := connect(nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, r := range []string{"deployments", "statefulsets", "controllerrevisions", "replicasets"} {
		list, err := c.Dynamic().Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: r}).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range list.Items {
			o := &list.Items[i]
			out[o.GetNamespace()+"/"+o.GetKind()+"/"+o.GetName()] = o
		}
	}
	return out
}

// A Deployment rolled back to an older ReplicaSet gets last-applied
// rebuilt for the restored template: the undo's change (image back to
// 1.14.2, TO_BE_DELETED back) applied to the stale last-applied. The v2
// apply deleted TO_BE_DELETED (its ReplicaSet was made in the second of
// that apply): that proves its name, not its value.
func TestAuditFixRebuildsLastAppliedOfAnUndoneDeployment(t *testing.T) {
	connect := clitest.FakeCluster(t, "testdata/auditfix/undone.yaml", "testdata/auditfix/namespaces.yaml")
	stdout, stderr, code := run(t, connect, "-n", "shop", "--fix=apply")
	if code != cli.ExitOK || stderr != clitest.NoInstallation {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	want := "deployment.apps/web fixed: last-applied rebuilt for the pod template of ReplicaSet web-aaa (revision 3) (as field manager kubectl-client-side-apply, which owns last-applied)\n" +
		"1 object fixed, 0 findings left to you.\n"
	if diff := cmp.Diff(want, stdout); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	got := clusterObjects(t, connect)["shop/Deployment/web"].GetAnnotations()[merge.LastAppliedAnnotation]
	wantLA := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"web","namespace":"shop"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},` +
		`"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"env":[{"name":"TO_BE_DELETED"},{"name":"ANOTHER_ENV","value":"who cares?"}],"image":"nginx:1.14.2","name":"nginx"}]}}}}` + "\n"
	if diff := cmp.Diff(wantLA, got); diff != "" {
		t.Errorf("last-applied (-want +got):\n%s", diff)
	}
}
