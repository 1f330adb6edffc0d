package migrate

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// appliedWeb is a Deployment that kubectl apply (client-side) made.
func appliedWeb(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	const lastApplied = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"web","namespace":"shop"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1.27","name":"web"}]}}}}`
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "resourceVersion": "7",
			"annotations": map[string]any{merge.LastAppliedAnnotation: lastApplied}},
		"spec": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx:1.27"}}}}},
	}}
	fields := `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{"f:selector":{},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "apps/v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}})
	return obj
}

// A write refused because the object changed since it was read (the
// Deployment controller's status update while it rolls) is planned again
// from a new read and sent again, as kubectl's own upgrade does; an object
// saved with kubectl get -o yaml (-f) is still written only as saved.
func TestMigrateTriesAgainAfterAConflict(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	for _, tc := range []struct {
		name      string
		conflicts int
		wantReads int
		wantOut   string
		wantErr   bool
	}{
		{name: "one conflict", conflicts: 1, wantReads: 2, wantOut: "upgraded:"},
		{name: "conflicts every time", conflicts: 99, wantReads: maxWriteAttempts, wantOut: "changed since resourceVersion", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
				map[schema.GroupVersionResource]string{gvr: "DeploymentList"}, appliedWeb(t))
			conflicts, reads := tc.conflicts, 0
			client.PrependReactor("patch", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
				if conflicts > 0 {
					conflicts--
					return true, nil, apierrors.NewConflict(gvr.GroupResource(), "web", nil)
				}
				return false, nil, nil
			})
			client.PrependReactor("get", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
				reads++
				return false, nil, nil
			})
			mapper := meta.NewDefaultRESTMapper(nil)
			mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
			connect := func(*genericclioptions.ConfigFlags) (*Cluster, error) { return NewCluster(client, mapper), nil }
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			cmd := NewCmd(streams, func() *merge.Analyzer { return merge.NewAnalyzer() }, connect)
			cmd.SetArgs([]string{"--server-side", "-n", "shop", "deployment/web"})
			cmd.SilenceErrors, cmd.SilenceUsage = true, true
			err := cmd.ExecuteContext(context.Background())
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want one: %v\n%s", err, tc.wantErr, out)
			}
			if !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("output %q, want %q in it", out, tc.wantOut)
			}
			if reads != tc.wantReads {
				t.Errorf("%d reads, want %d", reads, tc.wantReads)
			}
		})
	}
}
