package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Execute runs cmd with args as main does: a flag error is bad input, an
// error is printed to errOut as "error: …" (without the usage), and the
// exit status is the error's (Code). The root command runs through it,
// and so do a verb's tests, which run the verb's command alone.
func Execute(ctx context.Context, cmd *cobra.Command, errOut io.Writer, args []string) int {
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return BadInput(err) })
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err != nil {
		fmt.Fprintf(errOut, "error: %v\n", err)
	}
	return Code(err)
}
