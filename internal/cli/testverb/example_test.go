package testverb_test

import (
	"bytes"
	"fmt"
	"sync"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/testverb"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

func ExampleNewCmd() {
	analyzer := sync.OnceValue(func() *merge.Analyzer { return merge.NewAnalyzer() })

	var out bytes.Buffer
	cmd := testverb.NewCmd(genericiooptions.IOStreams{Out: &out}, analyzer)
	cmd.SetArgs([]string{"-v", "testdata/customscale"})
	if err := cmd.Execute(); err != nil {
		fmt.Println(err)
	}
	fmt.Print(out.String())
	// Output:
	// PASS testdata/customscale/queue_test.yaml: the scale of a Queue is judged at its CRD's specReplicasPath, spec.size
	// PASS testdata/customscale/queue_test.yaml: without the Queue's CRD the scale is not reviewed
	// 2 passed, 0 failed
}
