package main

import (
	"context"
	"sync"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/auditverb"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/diff"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/explain"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/handover"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/migrate"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/testverb"
	versioncmd "github.com/apply-hygiene/apply-hygiene/internal/cli/version"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// run executes the command line args and returns the exit status.
func run(ctx context.Context, streams genericiooptions.IOStreams, args []string) int {
	return runWith(ctx, streams, args, cluster.Connect)
}

// runWith is run with the cluster that connect returns.
func runWith(ctx context.Context, streams genericiooptions.IOStreams, args []string, connect cluster.ConnectFunc) int {
	return cli.Execute(ctx, newCmdHygiene(streams, connect), streams.ErrOut, args)
}

// NewCmdHygiene returns the root command. Each verb is a package under
// internal/cli.
func NewCmdHygiene(streams genericiooptions.IOStreams) *cobra.Command {
	return newCmdHygiene(streams, cluster.Connect)
}

func newCmdHygiene(streams genericiooptions.IOStreams, connect cluster.ConnectFunc) *cobra.Command {
	schemas := cluster.NewSchemas()
	connect = schemas.Connecting(connect)
	analyzer := sync.OnceValue(func() *merge.Analyzer { return merge.NewAnalyzer(merge.WithSchemas(schemas)) })
	cmd := &cobra.Command{
		Use:   "kubectl-hygiene",
		Short: "Show what kubectl apply really does and which fields it leaves behind",
		Long: `kubectl hygiene recomputes kubectl's client-side apply (the three-way merge of
the last-applied annotation, your manifest and the live object) and reports
what it reverts, what it leaves orphaned, and what else goes wrong.`,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl hygiene"},
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			go schemas.Run(cmd.Context())
		},
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.AddCommand(diff.NewCmd(streams, analyzer, connect), explain.NewCmd(streams, analyzer, connect), auditverb.NewCmd(streams, analyzer, connect))
	cmd.AddCommand(testverb.NewCmd(streams, analyzer), migrate.NewCmd(streams, analyzer, forMigrate(connect)), handover.NewCmd(streams, forHandover(connect), cli.ReadObjects))
	cmd.AddCommand(versioncmd.NewCmd(streams, version))
	return cmd
}

// forMigrate is connect as the migrate verb connects.
func forMigrate(connect cluster.ConnectFunc) migrate.ConnectFunc {
	return func(flags *genericclioptions.ConfigFlags) (*migrate.Cluster, error) {
		c, err := connect(flags)
		if err != nil {
			return nil, err
		}
		return migrate.NewCluster(c.Dynamic(), c.Mapper()), nil
	}
}

// forHandover is connect as the handover verb connects.
func forHandover(connect cluster.ConnectFunc) handover.ConnectFunc {
	return func(flags *genericclioptions.ConfigFlags) (handover.Cluster, error) {
		c, err := connect(flags)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}
