package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/clitest"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

var statefulsets = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}

// An apply between handover's read and its write changes last-applied:
// the guarded patch fails, nothing is written, and handover says to run
// it again.
func TestHandoverLosesToAConcurrentApply(t *testing.T) {
	connect := clitest.FakeCluster(t, "testdata/seed004/live.yaml")
	c, err := connect(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := c.Dynamic().(*dynamicfake.FakeDynamicClient)
	const applied = `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"my-wonderhoy-app","namespace":"default"},"spec":{"replicas":4}}` + "\n"
	client.PrependReactor("patch", "statefulsets", func(clienttesting.Action) (bool, runtime.Object, error) {
		// The concurrent apply, right before handover's patch arrives.
		obj, err := client.Tracker().Get(statefulsets, "default", "my-wonderhoy-app")
		if err != nil {
			return true, nil, err
		}
		acc, err := meta.Accessor(obj)
		if err != nil {
			return true, nil, err
		}
		ann := acc.GetAnnotations()
		ann[merge.LastAppliedAnnotation] = applied
		acc.SetAnnotations(ann)
		return false, nil, client.Tracker().Update(statefulsets, obj, "default")
	})
	stdout, stderr, code := runCluster(t, connect, "handover", "statefulset/my-wonderhoy-app", "spec.replicas", "-n", "default")
	if code != exitFailure || stdout != "" {
		t.Errorf("exit %d, stdout %q; want exit %d and nothing printed", code, stdout, exitFailure)
	}
	if want := "error: StatefulSet default/my-wonderhoy-app: last-applied changed since it was read (an apply in between?); nothing written, run handover again: "; !strings.HasPrefix(stderr, want) {
		t.Errorf("stderr %q, want it to start with %q", stderr, want)
	}
	obj, err := client.Resource(statefulsets).Namespace("default").Get(t.Context(), "my-wonderhoy-app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.GetAnnotations()[merge.LastAppliedAnnotation]; got != applied {
		t.Errorf("last-applied %q, want the concurrent apply's %q", got, applied)
	}
}

// The object named as the messages name it, RESOURCE.GROUP/NAME, and -f
// matched by group too: the manifest's StatefulSet of another group with
// the same name, which sets spec.replicas, is not the one handed over.
func TestHandoverNamesTheObjectWithItsGroup(t *testing.T) {
	connect := clitest.FakeCluster(t, "testdata/seed004/live.yaml")
	manifest := filepath.Join(t.TempDir(), "manifest.yaml")
	writeFile(t, manifest, `apiVersion: example.com/v1
kind: StatefulSet
metadata:
  name: my-wonderhoy-app
spec:
  replicas: 2
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: my-wonderhoy-app
`)
	stdout, stderr, code := runCluster(t, connect, "handover", "statefulsets.apps/my-wonderhoy-app", "spec.replicas", "-n", "default", "-f", manifest)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	want := "StatefulSet default/my-wonderhoy-app: last-applied no longer has spec.replicas\n" +
		"The next kubectl apply neither sets nor deletes them: they are their new writer's.\n" +
		manifest + " sets none of them.\n"
	if diff := cmp.Diff(want, stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A handover command copied from a message, as each shell passes its
// words on: bash and PowerShell take the single quotes off, cmd.exe passes
// them on, and handover takes them off itself.
func TestHandoverTakesTheMessagesQuotes(t *testing.T) {
	const path = "spec.template.spec.containers[name=nginx].image"
	want := "StatefulSet default/my-wonderhoy-app: last-applied no longer has " + path + "\n" +
		"The next kubectl apply neither sets nor deletes them: they are their new writer's.\n" +
		"Drop them from your manifest too: an apply of a manifest that sets them takes them back.\n"
	tests := map[string]struct{ args []string }{
		"as bash or PowerShell passes them": {args: []string{"statefulsets.apps/my-wonderhoy-app", path}},
		"as cmd.exe passes them":            {args: []string{"'statefulsets.apps/my-wonderhoy-app'", "'" + path + "'"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			connect := clitest.FakeCluster(t, "testdata/seed004/live.yaml")
			stdout, stderr, code := runCluster(t, connect, append([]string{"handover", "-n", "default"}, tc.args...)...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if diff := cmp.Diff(want, stdout); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
		})
	}
}
