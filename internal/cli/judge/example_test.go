package judge_test

import (
	"context"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/judge"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

func ExampleJudge_Explain() {
	// Applied with mode quiet; kubectl edit set debug since.
	settings := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings", "namespace": "shop"}, "data": map[string]any{"mode": "debug"}}}
	settings.SetAnnotations(map[string]string{merge.LastAppliedAnnotation: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings","namespace":"shop"},"data":{"mode":"quiet"}}`})

	ctx := context.Background()
	var flags judge.PolicyFlags // the defaults, offline
	j, err := flags.Load(ctx, nil, io.Discard)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, findings, err := j.Explain(ctx, merge.NewAnalyzer(), settings)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range findings {
		fmt.Println(f.Rule, f.Action, f.Path)
	}
	if err := judge.PrintFindings(os.Stdout, nil, false); err != nil {
		fmt.Println(err)
	}
	// Output:
	// imperative-edit deny data.mode
	// No findings.
}
