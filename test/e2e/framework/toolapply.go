package framework

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// ToolApply is a server-side apply of body to the object at path (the
// API server's path of the object, /apis/apps/v1/namespaces/NS/deployments/NAME)
// under the field manager manager with force, sent as the tools that are
// not kubectl send it (client-go's Patch with types.ApplyPatchType: Flux's
// kustomize- and helm-controller, Helm 4), with k's kubeconfig: no
// client-side-to-server-side migration of kubectl's fields follows, as
// kubectl apply --server-side's would. It returns what kubectl would have
// printed on stderr: the webhooks' warnings, the error of a denial.
func (k Kubectl) ToolApply(t *testing.T, path, manager string, body []byte) Result {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", k.Kubeconfig)
	if err != nil {
		t.Fatalf("reading %s: %v", k.Kubeconfig, err)
	}
	warnings := &WarningLog{}
	cfg.WarningHandler = warnings
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("creating a client from %s: %v", k.Kubeconfig, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = client.CoreV1().RESTClient().Patch(types.ApplyPatchType).AbsPath(path).
		Param("fieldManager", manager).Param("force", "true").Body(body).DoRaw(ctx)
	res := Result{Stderr: warnings.String()}
	if err != nil {
		res.Stderr += fmt.Sprintf("Error from server: %v\n", err)
		res.ExitCode = 1
	}
	return res
}
