package cli

import (
	"context"
	"errors"

	"github.com/spf13/cobra"
)

// Verb is a command's options in kubectl's style: Complete fills them in
// from the flags and arguments, Validate checks them, Run carries the
// command out.
type Verb interface {
	Complete(cmd *cobra.Command, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// RunE is the RunE of a command whose options are o: Complete, Validate,
// then Run, stopping at the first error.
func RunE(o Verb) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.Complete(cmd, args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(cmd.Context())
	}
}

// ValidOutput checks an -o value for reports: "json", "yaml", or empty
// for text.
func ValidOutput(o string) error {
	switch o {
	case "", "json", "yaml":
		return nil
	}
	return BadInput(errors.New(`--output must be "json" or "yaml" (or empty for text), not "` + o + `"`))
}
