package handover_test

import (
	"bytes"
	"context"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/handover"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// oneObject is a cluster holding one Deployment; it prints each patch.
type oneObject struct{ obj *unstructured.Unstructured }

func (c oneObject) Get(context.Context, string, string, string) (*unstructured.Unstructured, error) {
	return c.obj, nil
}

func (c oneObject) Patch(_ context.Context, _ string, _ *unstructured.Unstructured, _ types.PatchType, patch []byte, opts metav1.PatchOptions) (*unstructured.Unstructured, error) {
	fmt.Printf("patch as %s: %.60s…\n", opts.FieldManager, patch)
	return c.obj, nil
}

func ExampleNewCmd() {
	web := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop"}, "spec": map[string]any{"replicas": int64(3)}}}
	web.SetAnnotations(map[string]string{merge.LastAppliedAnnotation: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"replicas":3}}`})
	connect := func(*genericclioptions.ConfigFlags) (handover.Cluster, error) { return oneObject{web}, nil }
	read := func(string, io.Reader) ([]*unstructured.Unstructured, error) { return nil, nil }

	var out bytes.Buffer
	cmd := handover.NewCmd(genericiooptions.IOStreams{Out: &out}, connect, read)
	cmd.SetArgs([]string{"deployment/web", "spec.replicas", "-n", "shop"})
	if err := cmd.Execute(); err != nil {
		fmt.Println(err)
	}
	fmt.Print(out.String())
	// Output:
	// patch as kubectl-hygiene-handover: [{"op":"test","path":"/metadata/annotations/kubectl.kubernet…
	// patch as kubectl-client-side-apply: [{"op":"test","path":"/metadata/annotations/kubectl.kubernet…
	// Deployment shop/web: last-applied no longer has spec.replicas
	// The next kubectl apply neither sets nor deletes them: they are their new writer's.
	// Drop them from your manifest too: an apply of a manifest that sets them takes them back.
}
