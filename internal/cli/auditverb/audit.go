package auditverb

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/judge"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Options holds the flags and inputs of `kubectl hygiene audit`.
type Options struct {
	// AllNamespaces scans every namespace (-A).
	AllNamespaces bool
	// Namespace is the namespace scanned otherwise: -n, or the kubeconfig
	// context's.
	Namespace string
	// Kinds are resources scanned besides the default workloads.
	Kinds []string
	// Output is "table" (the default), "json" or "yaml".
	Output string
	// Progress reports progress on stderr even when it is not a terminal.
	Progress bool
	// ChunkSize is how many objects one list request asks for;
	// audit.DefaultPageSize by default.
	ChunkSize int64
	// Fix is "" (report only), "dry-run" (print each fix as a diff) or
	// "apply" (write the fixes); --fix alone is "dry-run".
	Fix string
	// FixIgnoredNamespaces lets --fix write in kube-system and in the
	// namespaces labelled apply-hygiene.io/ignore, which apply-hygiene
	// leaves alone otherwise.
	FixIgnoredNamespaces bool
	// PauseBeforeWrite, for tests, waits for a line on stdin between the
	// scan and the writes of --fix=apply.
	PauseBeforeWrite bool

	// progressLine is set when progress rewrites one terminal line.
	progressLine bool
	// policies are the policy flags of diff and explain: the installed
	// chart's configuration and user policies unless replaced.
	policies judge.PolicyFlags
	// kube are kubectl's connection flags, and how audit connects.
	kube     cluster.Flags
	analyzer func() *merge.Analyzer
	genericiooptions.IOStreams
}

var _ cli.Verb = (*Options)(nil)

// NewCmd returns `kubectl hygiene audit`, which scans the cluster connect
// returns and analyzes with analyzer.
func NewCmd(streams genericiooptions.IOStreams, analyzer func() *merge.Analyzer, connect cluster.ConnectFunc) *cobra.Command {
	o := &Options{Output: "table", ChunkSize: audit.DefaultPageSize, IOStreams: streams, analyzer: analyzer, kube: cluster.NewFlags(connect)}
	cmd := &cobra.Command{
		Use:   "audit [-A | -n NAMESPACE] [--kind KIND]... [-o table|json|yaml | --fix[=dry-run|apply]]",
		Short: "Find drift, orphans and stale or missing last-applied in the objects of a cluster",
		Long: `Scan the objects stored in the cluster for what apply-hygiene's admission
webhook reports on writes: fields that drifted from last-applied since the
last apply (imperative-edit, or apply-reverts-drift when a controller changed
them), orphaned fields that apply never removes, a last-applied that a rollout
undo left stale, and a missing, invalid or oversized last-applied. Rule IDs,
actions and messages come from the same policies as admission: those of the
chart installed in --hygiene-namespace, read from its ConfigMaps, as diff and
explain read them; --policy-config (the server's format) replaces its
configuration, --policy-dir adds policies.

Deployments, StatefulSets and DaemonSets are scanned; --kind adds others.
The exit status is 1 when any finding's action is deny.

--fix fixes what needs no person: a last-applied that a rollout undo left
stale gets the one merge rebuilds from the restored revision, and orphaned
fields are removed with their guarded JSON patches. Each object's fix is one
JSON patch whose test operations come first, so an object changed since the
audit read it is left alone and reported. --fix (or --fix=dry-run) prints
each fix as a diff and writes nothing; --fix=apply writes them.`,
		Example: `  kubectl hygiene audit -A
  kubectl hygiene audit -n shop --kind cronjobs -o json
  kubectl hygiene audit -A --policy-config policy.yaml
  kubectl hygiene audit -n shop --fix
  kubectl hygiene audit -n shop --fix=apply`,
		Args: cli.NoArgs("choose namespaces with -n or -A, and kinds with --kind"),
		RunE: cli.RunE(o),
	}
	f := cmd.Flags()
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "scan every namespace")
	f.StringSliceVar(&o.Kinds, "kind", nil, "also scan these kinds (e.g. cronjobs, widgets.example.com); repeat or separate with commas")
	f.StringVarP(&o.Output, "output", "o", o.Output, "output format: table, json or yaml")
	f.BoolVar(&o.Progress, "progress", false, "report progress on stderr also when it is not a terminal")
	f.Int64Var(&o.ChunkSize, "chunk-size", o.ChunkSize, "how many objects to list per request")
	f.StringVar(&o.Fix, "fix", "", "fix what needs no person: dry-run (the default of --fix alone) prints each fix as a diff, apply writes them")
	f.Lookup("fix").NoOptDefVal = fixDryRun
	f.BoolVar(&o.FixIgnoredNamespaces, "fix-ignored-namespaces", false, "let --fix write in kube-system and in namespaces labelled "+audit.IgnoreLabel+" too (never where the enforcement label is dryrun)")
	f.BoolVar(&o.PauseBeforeWrite, "pause-before-write", false, "for tests: with --fix=apply, wait for a line on stdin before writing")
	_ = f.MarkHidden("pause-before-write")
	o.policies.AddFlags(f)
	o.kube.AddFlags(f)
	return cmd
}

// Complete reads the namespace; it does not connect.
func (o *Options) Complete(cmd *cobra.Command, _ []string) error {
	o.progressLine = cli.IsTerminal(o.ErrOut)
	var err error
	o.Namespace, err = cli.NamespaceScope(cmd, o.AllNamespaces, o.kube.ConfigFlags)
	return err
}

// Validate checks the flags.
func (o *Options) Validate() error {
	switch o.Output {
	case "table", "json", "yaml":
	default:
		return cli.BadInput(fmt.Errorf(`--output must be "table", "json" or "yaml", not %q`, o.Output))
	}
	switch o.Fix {
	case "", fixDryRun, fixApply:
	default:
		return cli.BadInput(fmt.Errorf(`--fix must be "dry-run" or "apply", not %q`, o.Fix))
	}
	if o.Fix != "" && o.Output != "table" {
		return cli.BadInput(fmt.Errorf("--fix prints diffs and lines, not %s: leave out --output", o.Output))
	}
	if o.ChunkSize <= 0 {
		return cli.BadInput(fmt.Errorf("--chunk-size must be positive, not %d", o.ChunkSize))
	}
	for _, k := range o.Kinds {
		if strings.TrimSpace(k) == "" || strings.Contains(k, "/") {
			return cli.BadInput(fmt.Errorf("--kind %q: name a kind or resource, such as cronjobs or widgets.example.com", k))
		}
	}
	return nil
}

// Run scans, prints the findings and fails when one is a deny.
func (o *Options) Run(ctx context.Context) error {
	c, err := o.kube.Connect()
	if err != nil {
		return err
	}
	engine, err := o.policies.Engine(ctx, c, o.ErrOut)
	if err != nil {
		return err
	}
	resources, err := o.resources(c)
	if err != nil {
		return err
	}
	opts := []audit.Option{audit.WithPageSize(o.ChunkSize)}
	if c.ProvesRemovals() {
		// As the server's audit does (--removal-proofs), with the user's
		// credentials: no orphan the API server would put back.
		opts = append(opts, audit.WithRemovalProofs())
	}
	if o.Progress || o.progressLine {
		opts = append(opts, audit.WithProgress(o.reportProgress))
	}
	// A person's command: warn findings are fixed too, but nothing in
	// ignored namespaces unless asked, and never under dryrun.
	opts = append(opts, audit.WithFixScope(audit.FixScope{Person: true, IgnoredNamespaces: o.FixIgnoredNamespaces}))
	scanner := audit.NewScanner(c.Dynamic(), o.analyzer(), engine, opts...)
	report, err := scanner.Scan(ctx, audit.Target{Namespace: o.Namespace, Resources: resources})
	o.endProgress()
	if err != nil {
		return err
	}
	if o.Fix != "" {
		fixErr := o.fix(ctx, c, scanner, report)
		if err := o.outcome(report); fixErr == nil {
			return err
		}
		return fixErr
	}
	if err := o.print(report); err != nil {
		return err
	}
	return o.outcome(report)
}

// resources are the default workloads plus --kind.
func (o *Options) resources(c *cluster.Cluster) ([]schema.GroupVersionResource, error) {
	return cli.WithKinds(c.Mapper(), audit.DefaultResources(), o.Kinds)
}

// outcome is the error that sets the exit status: objects that could not
// be analyzed, or findings whose action is deny.
func (o *Options) outcome(r *audit.Report) error {
	for _, e := range r.Errors {
		fmt.Fprintf(o.ErrOut, "warning: %v\n", e)
	}
	var problems []string
	if n := len(r.Errors); n > 0 {
		problems = append(problems, fmt.Sprintf("%d object(s) could not be analyzed", n))
	}
	denied := 0
	for _, f := range r.Findings {
		if f.Action == policy.ActionDeny {
			denied++
		}
	}
	if denied > 0 {
		problems = append(problems, fmt.Sprintf("%d finding(s) with the action deny", denied))
	}
	if len(problems) == 0 {
		return nil
	}
	return &cli.ExitError{Code: cli.ExitFailure, Err: errors.New(strings.Join(problems, "; "))}
}

func (o *Options) reportProgress(p audit.Progress) {
	format := "scanned %d objects (listing %s), %d findings\n"
	if o.progressLine {
		format = "\r\x1b[Kscanned %d objects (listing %s), %d findings"
	}
	res := p.Resource.Resource
	if p.Resource.Group != "" {
		res += "." + p.Resource.Group
	}
	fmt.Fprintf(o.ErrOut, format, p.Objects, res, p.Findings)
}

// endProgress ends the progress line on a terminal.
func (o *Options) endProgress() {
	if o.progressLine {
		fmt.Fprint(o.ErrOut, "\r\x1b[K")
	}
}
