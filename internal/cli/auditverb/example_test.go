package auditverb_test

import (
	"bytes"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/auditverb"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

func ExampleNewCmd() {
	// A fake cluster holding Deployment shop/made, made by kubectl create.
	objs, err := cli.ReadObjects("testdata/cluster/deployment-created.yaml", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	lists := map[schema.GroupVersionResource]string{}
	for _, kind := range []string{"Deployment", "StatefulSet", "DaemonSet", "ConfigMap"} {
		gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: kind}
		if kind == "ConfigMap" {
			gvk.Group = ""
		}
		mapper.Add(gvk, meta.RESTScopeNamespace)
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		lists[plural] = kind + "List"
	}
	var stored []runtime.Object
	for _, o := range objs {
		stored = append(stored, o)
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, stored...)
	connect := func(*genericclioptions.ConfigFlags) (*cluster.Cluster, error) {
		return cluster.New(client, mapper), nil
	}
	analyzer := sync.OnceValue(func() *merge.Analyzer { return merge.NewAnalyzer() })

	var out, errOut bytes.Buffer
	cmd := auditverb.NewCmd(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, analyzer, connect)
	cmd.SetArgs([]string{"-n", "shop"})
	if err := cmd.Execute(); err != nil {
		fmt.Println(err)
	}
	fmt.Print(out.String())
	// Output:
	// NAMESPACE   OBJECT            RULE                   ACTION   PATH
	// shop        Deployment/made   missing-last-applied   warn     metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]
	//
	// [missing-last-applied] Deployment shop/made: the object has no kubectl.kubernetes.io/last-applied-configuration annotation (objects made by kubectl create or replace without --save-config have none), so kubectl apply cannot delete fields that your manifest does not have. Record your manifest first with: kubectl apply set-last-applied -f <manifest> --create-annotation
}
