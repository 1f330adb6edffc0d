package main

import (
	"strings"
	"testing"

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
