package version_test

import (
	"bytes"
	"fmt"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/version"
)

func ExampleNewCmd() {
	var out bytes.Buffer
	cmd := version.NewCmd(genericiooptions.IOStreams{Out: &out}, "v0.1.0")
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil {
		fmt.Println(err)
	}
	fmt.Print(out.String())
	// Output: v0.1.0
}
