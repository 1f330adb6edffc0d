package explain

import (
	"context"
	"errors"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/judge"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// Options holds the flags and inputs of `kubectl hygiene explain`.
type Options struct {
	// LiveFile holds the live objects, as `kubectl get -o yaml` prints them.
	LiveFile string
	// Output is "", "json" or "yaml".
	Output string
	// Kind and Name name the object to read from the cluster.
	Kind, Name string
	// Namespace is where the object is: -n, or the kubeconfig context's.
	Namespace string

	// color is set when the text goes to a terminal.
	color    bool
	policies judge.PolicyFlags
	// kube reads the object from the cluster (KIND/NAME).
	kube     cluster.Flags
	analyzer func() *merge.Analyzer
	genericiooptions.IOStreams
}

// item is the outcome for one live object.
type item struct {
	Object      merge.ObjectRef       `json:"object"`
	LastApplied merge.LastAppliedInfo `json:"lastApplied"`
	Fields      []merge.FieldInfo     `json:"fields"`
}

var _ cli.Verb = (*Options)(nil)

// NewCmd returns `kubectl hygiene explain`, which reads the object from
// the cluster connect returns and analyzes it with analyzer.
func NewCmd(streams genericiooptions.IOStreams, analyzer func() *merge.Analyzer, connect cluster.ConnectFunc) *cobra.Command {
	o := &Options{IOStreams: streams, analyzer: analyzer, kube: cluster.NewFlags(connect)}
	cmd := &cobra.Command{
		Use:   "explain (KIND/NAME | --live FILE)",
		Short: "List every field of a live object with its owner, drift and orphan status",
		Long: `List every field of a live object with who owns it (last-applied, a field
manager, a server default), whether it drifted from last-applied (the next
apply of the same manifest reverts it) and whether it is an orphan (apply
keeps it forever unless the manifest sets it).

The object is read from the cluster (KIND/NAME, with kubectl's connection
flags), or from a file that kubectl get -o yaml wrote (--live FILE, offline).
On a terminal, drift and orphans are colored.`,
		Example: `  kubectl hygiene explain statefulset/my-app -n shop
  kubectl hygiene explain deployment web -o json

  # Offline, from a saved object:
  kubectl get statefulset my-app -o yaml > live.yaml
  kubectl hygiene explain --live live.yaml`,
		RunE: cli.RunE(o),
	}
	cmd.Flags().StringVar(&o.LiveFile, "live", "", "read the live objects from this file (kubectl get -o yaml) instead of the cluster")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "output format: json or yaml (default: text)")
	o.policies.AddFlags(cmd.Flags())
	o.kube.AddFlags(cmd.Flags())
	return cmd
}

// Complete reads the arguments and the namespace; it does not connect.
func (o *Options) Complete(_ *cobra.Command, args []string) error {
	o.color = cli.IsTerminal(o.Out)
	if len(args) == 0 {
		return nil
	}
	if o.LiveFile != "" {
		return cli.BadInput(errors.New("name the object either as KIND/NAME or with --live FILE, not both"))
	}
	var err error
	if o.Kind, o.Name, err = cli.KindAndName(args); err != nil {
		return err
	}
	if o.Namespace, err = cli.NamespaceOf(o.kube.ConfigFlags); err != nil {
		return cli.BadInput(err)
	}
	return nil
}

// Validate checks the flags.
func (o *Options) Validate() error {
	if o.LiveFile == "" && o.Name == "" {
		return cli.BadInput(errors.New("name the object as KIND/NAME (read from the cluster) or give --live FILE"))
	}
	return cli.ValidOutput(o.Output)
}

// Run explains the object of the cluster, or every object of the file.
func (o *Options) Run(ctx context.Context) error {
	live, err := o.objects(ctx)
	if err != nil {
		return err
	}
	j, err := o.judge(ctx)
	if err != nil {
		return err
	}
	var items []item
	findings := []judge.Finding{}
	for _, l := range live {
		ex, fs, err := j.Explain(ctx, o.analyzer(), l)
		if err != nil {
			return err
		}
		items = append(items, item{Object: ex.Analysis.Object, LastApplied: ex.Analysis.LastApplied, Fields: ex.Fields})
		findings = append(findings, fs...)
	}
	return o.print(items, findings)
}

// judge loads the policies of an explain: with the installed chart's when
// it reads the cluster (KIND/NAME).
func (o *Options) judge(ctx context.Context) (*judge.Judge, error) {
	return o.policies.LoadConnected(ctx, o.LiveFile == "", o.kube.Connect, o.ErrOut)
}

func (o *Options) objects(ctx context.Context) ([]*unstructured.Unstructured, error) {
	if o.LiveFile != "" {
		return cli.ReadObjects(o.LiveFile, o.In)
	}
	c, err := o.kube.Connect()
	if err != nil {
		return nil, err
	}
	obj, err := c.Get(ctx, o.Kind, o.Name, o.Namespace)
	if err != nil {
		return nil, err
	}
	return []*unstructured.Unstructured{obj}, nil
}
