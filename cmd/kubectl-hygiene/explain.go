package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// ExplainOptions holds the flags and inputs of `kubectl hygiene explain`.
type ExplainOptions struct {
	// LiveFile holds the live objects, as `kubectl get -o yaml` prints them.
	LiveFile string
	// Output is "", "json" or "yaml".
	Output string

	analyzer func() *merge.Analyzer
	genericiooptions.IOStreams
}

// explainItem is the outcome for one live object.
type explainItem struct {
	Object      merge.ObjectRef       `json:"object"`
	LastApplied merge.LastAppliedInfo `json:"lastApplied"`
	Fields      []merge.FieldInfo     `json:"fields"`
}

// NewCmdExplain returns `kubectl hygiene explain`.
func NewCmdExplain(streams genericiooptions.IOStreams, analyzer func() *merge.Analyzer) *cobra.Command {
	o := &ExplainOptions{IOStreams: streams, analyzer: analyzer}
	cmd := &cobra.Command{
		Use:   "explain --live FILE",
		Short: "List every field of live objects with its owner, drift and orphan status",
		Long: `List every field of each live object with who owns it (last-applied, a field
manager, a server default), whether it drifted from last-applied (the next
apply of the same manifest reverts it) and whether it is an orphan (apply
keeps it forever unless the manifest sets it).`,
		Example: `  kubectl get statefulset my-app -o yaml > live.yaml
  kubectl hygiene explain --live live.yaml`,
		Args: noArgs("explain KIND/NAME from the cluster is not supported yet; use --live FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&o.LiveFile, "live", "", "file with the live objects (kubectl get -o yaml); reading the cluster is not supported yet")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "output format: json or yaml (default: text)")
	return cmd
}

// Complete fills in what the flags leave out; it reads nothing.
func (o *ExplainOptions) Complete(_ *cobra.Command, _ []string) error { return nil }

// Validate checks the flags.
func (o *ExplainOptions) Validate() error {
	if o.LiveFile == "" {
		return badInput(errors.New("--live is required: explaining KIND/NAME from the cluster is not supported yet"))
	}
	return validOutput(o.Output)
}

// Run explains every object of the file.
func (o *ExplainOptions) Run(_ context.Context) error {
	live, err := readObjects(o.LiveFile, o.In)
	if err != nil {
		return err
	}
	var items []explainItem
	findings := []Finding{}
	for _, l := range live {
		ex, err := o.analyzer().Explain(l)
		if err != nil {
			return err
		}
		items = append(items, explainItem{Object: ex.Analysis.Object, LastApplied: ex.Analysis.LastApplied, Fields: ex.Fields})
		findings = append(findings, findingsFor(ex.Analysis, l, "")...)
	}
	return o.print(items, findings)
}
