package version

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
)

// Options holds the inputs of `kubectl hygiene version`.
type Options struct {
	// Version is the release printed.
	Version string
	genericiooptions.IOStreams
}

var _ cli.Verb = (*Options)(nil)

// NewCmd returns `kubectl hygiene version`, which prints version.
func NewCmd(streams genericiooptions.IOStreams, version string) *cobra.Command {
	o := &Options{Version: version, IOStreams: streams}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of kubectl hygiene",
		Args:  cli.NoArgs("version takes no arguments"),
		RunE:  cli.RunE(o),
	}
}

// Complete implements cli.Verb: the version takes nothing from the flags.
func (o *Options) Complete(*cobra.Command, []string) error { return nil }

// Validate implements cli.Verb.
func (o *Options) Validate() error { return nil }

// Run prints the version.
func (o *Options) Run(context.Context) error {
	_, err := fmt.Fprintln(o.Out, o.Version)
	return err
}
