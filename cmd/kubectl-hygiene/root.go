package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// Exit statuses.
const (
	exitOK       = 0
	exitFailure  = 1
	exitBadInput = 2
)

// exitError carries the exit status that main returns for an error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// badInput marks err as caused by the input: flags, files, documents.
func badInput(err error) error { return &exitError{code: exitBadInput, err: err} }

func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	return exitFailure
}

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
	return exitCode(err)
}

// noArgs rejects positional arguments as bad input.
func noArgs(hint string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return badInput(fmt.Errorf("unexpected argument %q: %s", args[0], hint))
		}
		return nil
	}
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
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return badInput(err) })
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.AddCommand(NewCmdDiff(streams, analyzer, connect), NewCmdExplain(streams, analyzer, connect), NewCmdAudit(streams, analyzer, connect))
	cmd.AddCommand(NewCmdTest(streams, analyzer), NewCmdMigrate(streams, analyzer, connect), NewCmdHandover(streams, connect))
	cmd.AddCommand(NewCmdVersion(streams))
	return cmd
}

// validOutput checks an -o value for reports.
func validOutput(o string) error {
	switch o {
	case "", "json", "yaml":
		return nil
	}
	return badInput(errors.New(`--output must be "json" or "yaml" (or empty for text), not "` + o + `"`))
}

// verb is a command's options in kubectl's style: Complete fills them in
// from the flags and arguments, Validate checks them, Run carries the
// command out.
type verb interface {
	Complete(cmd *cobra.Command, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// runVerb is the RunE of a command whose options are o.
func runVerb(o verb) func(*cobra.Command, []string) error {
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
