package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/handover"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/migrate"
	versioncmd "github.com/apply-hygiene/apply-hygiene/internal/cli/version"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// run executes the command line args and returns the exit status.
func run(ctx context.Context, streams genericiooptions.IOStreams, args []string) int {
	return runWith(ctx, streams, args, connect)
}

// runWith is run with the cluster that connect returns.
func runWith(ctx context.Context, streams genericiooptions.IOStreams, args []string, connect connectFunc) int {
	cmd := newCmdHygiene(streams, connect)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err != nil {
		fmt.Fprintf(streams.ErrOut, "error: %v\n", err)
	}
	return cli.Code(err)
}

// NewCmdHygiene returns the root command. Subcommands live one per file.
func NewCmdHygiene(streams genericiooptions.IOStreams) *cobra.Command {
	return newCmdHygiene(streams, connect)
}

func newCmdHygiene(streams genericiooptions.IOStreams, connect connectFunc) *cobra.Command {
	schemas := newClusterSchemas()
	connect = schemas.connecting(connect)
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
			go schemas.run(cmd.Context())
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.BadInput(err) })
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.AddCommand(NewCmdDiff(streams, analyzer, connect), NewCmdExplain(streams, analyzer, connect), NewCmdAudit(streams, analyzer, connect))
	cmd.AddCommand(NewCmdTest(streams, analyzer), migrate.NewCmd(streams, analyzer, forMigrate(connect)), handover.NewCmd(streams, forHandover(connect), cli.ReadObjects))
	cmd.AddCommand(versioncmd.NewCmd(streams, version))
	return cmd
}
