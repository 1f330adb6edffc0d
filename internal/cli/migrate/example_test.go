package migrate_test

import (
	"bytes"
	"errors"
	"fmt"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/migrate"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// A migration names where it goes: without --server-side it is bad input,
// refused before the cluster is asked.
func ExampleNewCmd() {
	connect := func(*genericclioptions.ConfigFlags) (*migrate.Cluster, error) {
		return nil, errors.New("not reached")
	}
	var out bytes.Buffer
	cmd := migrate.NewCmd(genericiooptions.IOStreams{Out: &out, ErrOut: &out}, func() *merge.Analyzer { return merge.NewAnalyzer() }, connect)
	cmd.SetArgs([]string{"-n", "shop"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.Execute()
	fmt.Println(err, cli.Code(err))
	// Output: say where to migrate to: --server-side (the only migration there is) 2
}
