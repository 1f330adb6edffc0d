package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// version is the plugin's release, as the krew manifest (plugins/hygiene.yaml)
// names it; releases set it with -ldflags "-X main.version=vX.Y.Z".
var version = "v0.1.0"

// NewCmdVersion returns `kubectl hygiene version`.
func NewCmdVersion(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of kubectl hygiene",
		Args:  noArgs("version takes no arguments"),
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(streams.Out, version)
			return err
		},
	}
}
