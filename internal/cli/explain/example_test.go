package explain_test

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/explain"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

func ExampleNewCmd() {
	analyzer := sync.OnceValue(func() *merge.Analyzer { return merge.NewAnalyzer() })
	offline := func(*genericclioptions.ConfigFlags) (*cluster.Cluster, error) { return nil, errors.New("offline") }

	var out, errOut bytes.Buffer
	cmd := explain.NewCmd(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, analyzer, offline)
	cmd.SetArgs([]string{"--live", "testdata/example/settings.yaml"})
	if err := cmd.Execute(); err != nil {
		fmt.Println(err)
	}
	fmt.Print(out.String())
	// Output:
	// ConfigMap shop/settings (last-applied: present)
	// PATH                 VALUE         OWNERS         STATUS
	// apiVersion           "v1"          -              last-applied
	// kind                 "ConfigMap"   -              last-applied
	// data.mode            "debug"       kubectl-edit   last-applied,drift
	// metadata.name        "settings"    -              last-applied
	// metadata.namespace   "shop"        -              last-applied
	// DENY: [imperative-edit] ConfigMap shop/settings: data.mode was changed outside kubectl apply by kubectl-edit at 2024-05-01T10:00:00Z (last-applied "quiet", now "debug"); the next kubectl apply puts the last-applied value back without a word. Put the change in your manifest and run kubectl apply, or hand the field over to its new writer by deleting it from last-applied first with: kubectl hygiene handover configmaps/settings -n shop data.mode
}
