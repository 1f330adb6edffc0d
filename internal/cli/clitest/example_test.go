package clitest_test

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/clitest"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/version"
)

func ExampleRun() {
	newCmd := func(streams genericiooptions.IOStreams) *cobra.Command { return version.NewCmd(streams, "v1.2.3") }
	stdout, _, code := clitest.Run(context.Background(), newCmd)
	fmt.Printf("%d %s", code, stdout)
	_, stderr, code := clitest.Run(context.Background(), newCmd, "--bogus")
	fmt.Printf("%d %s", code, stderr)
	// Output:
	// 0 v1.2.3
	// 2 error: unknown flag: --bogus
}
