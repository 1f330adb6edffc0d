package migrate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// defaultSSAManager is the field manager of `kubectl apply --server-side`.
const defaultSSAManager = "kubectl"

// Options holds the flags and inputs of `kubectl hygiene migrate`.
type Options struct {
	// ServerSide must be set: moving to server-side apply is the only
	// migration there is.
	ServerSide bool
	// FieldManager is the server-side apply manager that takes over the
	// fields of client-side apply. Default: "kubectl", the manager of
	// `kubectl apply --server-side`.
	FieldManager string
	// DryRun prints what would be done and writes nothing (the writes are
	// sent as server-side dry runs).
	DryRun bool
	// DropLastApplied removes the last-applied annotation of each object
	// whose upgrade succeeded.
	DropLastApplied bool
	// AllNamespaces lists every namespace (-A).
	AllNamespaces bool
	// Namespace is the namespace otherwise: -n, or the kubeconfig
	// context's.
	Namespace string
	// Kinds are resources listed besides the default workloads.
	Kinds []string
	// Output is "" (text), "json" or "yaml".
	Output string
	// Objects are the objects named as TYPE/NAME arguments.
	Objects []namedObject
	// Files name objects with -f: manifests (the live object is read) or
	// objects saved with `kubectl get -o yaml` (migrated as saved).
	Files []string

	kube     *genericclioptions.ConfigFlags
	connect  ConnectFunc
	analyzer func() *merge.Analyzer
	genericiooptions.IOStreams
}

// namedObject is one TYPE/NAME argument.
type namedObject struct{ Kind, Name string }

// NewCmd returns `kubectl hygiene migrate`.
func NewCmd(streams genericiooptions.IOStreams, analyzer func() *merge.Analyzer, connect ConnectFunc) *cobra.Command {
	o := &Options{IOStreams: streams, analyzer: analyzer, connect: connect, kube: genericclioptions.NewConfigFlags(true)}
	// The server's warnings on the writes (an admission webhook's) are
	// printed as kubectl prints them.
	o.kube.WrapConfigFn = func(c *rest.Config) *rest.Config {
		c.WarningHandler = rest.NewWarningWriter(streams.ErrOut, rest.WarningWriterOptions{Deduplicate: true})
		return c
	}
	cmd := &cobra.Command{
		Use:   "migrate --server-side [--field-manager NAME] [--dry-run] [--drop-last-applied] [-n NAMESPACE | -A] [-f FILE | TYPE/NAME ...]",
		Short: "Move objects from client-side to server-side apply without leaving fields behind",
		Long: `Find the objects still managed by client-side apply (a managedFields entry
of an Update manager that wrote the last-applied annotation, such as
kubectl-client-side-apply, or only the annotation), print the fields that
client-side apply owns (a server-side apply that drops them from its manifest
would leave them behind: kubernetes/kubernetes#99003), and upgrade their
managedFields as kubectl does (k8s.io/client-go/util/csaupgrade): the
client-side apply managers' fields move to the Apply entry of --field-manager,
so that its next server-side apply deletes what the manifest dropped.

kubectl apply --server-side makes this upgrade itself, for any
--field-manager; controllers that apply server-side through client-go
without it (a GitOps tool's manager) leave the fields behind. Run migrate
with their manager name before they take over.

Every write carries the resourceVersion that was read: an object that
changed in between is read, planned and sent again (up to 5 times), and
migrate says so if it still fails; an object saved with kubectl get -o
yaml (-f) is migrated only if unchanged since. --dry-run sends the
writes as server-side dry runs. --drop-last-applied then removes the
last-applied annotation of each object whose upgrade succeeded.

Without arguments, the Deployments, StatefulSets and DaemonSets of the
namespace (-n, -A) are listed; --kind adds others.`,
		Example: `  kubectl hygiene migrate --server-side --dry-run -A
  kubectl hygiene migrate --server-side --field-manager kustomize-controller -n shop
  kubectl hygiene migrate --server-side deployment/web --drop-last-applied
  kubectl hygiene migrate --server-side -f web.yaml -o json`,
		RunE: cli.RunE(o),
	}
	f := cmd.Flags()
	f.BoolVar(&o.ServerSide, "server-side", false, "move to server-side apply (required)")
	f.StringVar(&o.FieldManager, "field-manager", defaultSSAManager, "the server-side apply field manager that takes over client-side apply's fields")
	f.BoolVar(&o.DryRun, "dry-run", false, "print what would be done; write nothing (server-side dry run)")
	f.BoolVar(&o.DropLastApplied, "drop-last-applied", false, "remove the last-applied annotation of each object whose upgrade succeeded")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "list every namespace")
	f.StringSliceVar(&o.Kinds, "kind", nil, "also list these kinds (e.g. cronjobs); repeat or separate with commas")
	f.StringSliceVarP(&o.Files, "filename", "f", nil, "objects to migrate: manifests, or objects saved with kubectl get -o yaml (migrated as saved); repeat for more")
	f.StringVarP(&o.Output, "output", "o", "", "output format: json or yaml (default: text)")
	o.kube.AddFlags(f)
	return cmd
}

// Complete reads the arguments and the namespace; it does not connect.
func (o *Options) Complete(cmd *cobra.Command, args []string) error {
	for _, a := range args {
		kind, name, err := cli.KindAndName([]string{a})
		if err != nil {
			return cli.BadInput(fmt.Errorf("argument %q: name objects as TYPE/NAME, e.g. deployment/web", a))
		}
		o.Objects = append(o.Objects, namedObject{Kind: kind, Name: name})
	}
	var err error
	o.Namespace, err = cli.NamespaceScope(cmd, o.AllNamespaces, o.kube)
	return err
}

// Validate checks the flags.
func (o *Options) Validate() error {
	switch {
	case !o.ServerSide:
		return cli.BadInput(errors.New("say where to migrate to: --server-side (the only migration there is)"))
	case strings.TrimSpace(o.FieldManager) == "":
		return cli.BadInput(errors.New("--field-manager must not be empty"))
	case o.AllNamespaces && (len(o.Objects) > 0 || len(o.Files) > 0):
		return cli.BadInput(errors.New("--all-namespaces (-A) lists objects; it does not go with TYPE/NAME or -f"))
	case len(o.Kinds) > 0 && (len(o.Objects) > 0 || len(o.Files) > 0):
		return cli.BadInput(errors.New("--kind lists objects; it does not go with TYPE/NAME or -f"))
	}
	for _, k := range o.Kinds {
		if strings.TrimSpace(k) == "" || strings.Contains(k, "/") {
			return cli.BadInput(fmt.Errorf("--kind %q: name a kind or resource, such as cronjobs", k))
		}
	}
	return cli.ValidOutput(o.Output)
}

// Run finds the objects, plans and performs their migration, and prints
// one block per object. It fails when an object could not be migrated.
func (o *Options) Run(ctx context.Context) error {
	c, err := o.connect(o.kube)
	if err != nil {
		return err
	}
	objs, err := o.objects(ctx, c)
	if err != nil {
		return err
	}
	m := migrator{cluster: c, analyzer: o.analyzer(), manager: o.FieldManager, dryRun: o.DryRun, dropLastApplied: o.DropLastApplied}
	report := migrateReport{DryRun: o.DryRun, FieldManager: o.FieldManager, Objects: []migration{}}
	for _, t := range objs {
		mg, err := m.migrateFresh(ctx, c, t)
		if err != nil {
			return err
		}
		if mg != nil {
			report.Objects = append(report.Objects, *mg)
		}
	}
	if err := o.print(report); err != nil {
		return err
	}
	return report.outcome()
}
