package cluster_test

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
)

func ExampleCluster_Get() {
	deployments := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(deployments, meta.RESTScopeNamespace)
	web := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop"}, "spec": map[string]any{"replicas": int64(3)}}}
	c := cluster.New(dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), web), mapper)

	obj, err := c.Get(context.Background(), "deployment", "web", "shop")
	if err != nil {
		fmt.Println(err)
		return
	}
	replicas, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	fmt.Println(obj.GetNamespace(), obj.GetName(), replicas)
	_, err = c.Get(context.Background(), "deployment", "api", "shop")
	fmt.Println(err)
	// Output:
	// shop web 3
	// reading deployment/api: deployments.apps "api" not found
}

func ExampleFlags_Connect() {
	connect := func(flags *genericclioptions.ConfigFlags) (*cluster.Cluster, error) {
		fmt.Println("connecting with --context", *flags.Context)
		return cluster.New(dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), meta.NewDefaultRESTMapper(nil)), nil
	}
	flags := cluster.NewFlags(connect)
	fs := pflag.NewFlagSet("explain", pflag.ContinueOnError)
	flags.AddFlags(fs)
	if err := fs.Parse([]string{"--context", "staging", "-n", "shop"}); err != nil {
		fmt.Println(err)
		return
	}

	c, err := flags.Connect()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(*flags.Namespace, c.ProvesRemovals())
	// Output:
	// connecting with --context staging
	// shop false
}
