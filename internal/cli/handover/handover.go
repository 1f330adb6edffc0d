package handover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// Cluster is what handover uses of the API server.
type Cluster interface {
	// Get reads one object, KIND/NAME in namespace; kind as kubectl's users
	// write it.
	Get(ctx context.Context, kind, name, namespace string) (*unstructured.Unstructured, error)
	// Patch patches obj, of kind, with patch of type pt, and returns the
	// object as the server left it.
	Patch(ctx context.Context, kind string, obj *unstructured.Unstructured, pt types.PatchType, patch []byte, opts metav1.PatchOptions) (*unstructured.Unstructured, error)
}

// ConnectFunc connects to the cluster that kubectl's connection flags
// select.
type ConnectFunc func(flags *genericclioptions.ConfigFlags) (Cluster, error)

// ReadFunc reads the objects of a manifest file ("-": in).
type ReadFunc func(path string, in io.Reader) ([]*unstructured.Unstructured, error)

// Options holds the flags and inputs of `kubectl hygiene handover`.
type Options struct {
	// Kind and Name name the object.
	Kind, Name string
	// Paths are the fields to hand over, in the messages' notation.
	Paths []merge.Path
	// Namespace is where the object is: -n, or the kubeconfig context's.
	Namespace string
	// Manifest is the manifest the user applies (-f), to say which of the
	// paths it still sets; empty: not checked.
	Manifest string
	// DryRun sends the write as a server-side dry run.
	DryRun bool
	// Output is "", "json" or "yaml".
	Output string

	kube    *genericclioptions.ConfigFlags
	connect ConnectFunc
	read    ReadFunc
	genericiooptions.IOStreams
}

// outcome is what handover prints with -o json or yaml.
type outcome struct {
	Object     merge.ObjectRef `json:"object"`
	HandedOver []string        `json:"handedOver"`
	DryRun     bool            `json:"dryRun"`
	// ManifestStillSets are the paths that -f's manifest still sets; nil
	// without -f.
	ManifestStillSets []string `json:"manifestStillSets,omitempty"`
}

var _ cli.Verb = (*Options)(nil)

// NewCmd returns `kubectl hygiene handover`, which reads the object from
// the cluster connect returns and the manifest of -f with read.
func NewCmd(streams genericiooptions.IOStreams, connect ConnectFunc, read ReadFunc) *cobra.Command {
	o := &Options{IOStreams: streams, connect: connect, read: read, kube: genericclioptions.NewConfigFlags(true)}
	cmd := &cobra.Command{
		Use:   "handover TYPE/NAME PATH... [-f MANIFEST] [--dry-run] [-o json|yaml]",
		Short: "Hand fields over to their new writer: delete them from last-applied",
		Long: `Hand fields over to their new writer (kubectl scale, an autoscaler, a
deploy robot): delete them from the object's last-applied configuration, so
that kubectl apply neither sets nor deletes them any more. The paths are
written as apply-hygiene's messages write them, e.g. spec.replicas or
'spec.template.spec.containers[name=web].image' (quote them for the shell;
cmd.exe passes single quotes on, and handover takes off the messages' own).
TYPE is a kind or resource as kubectl takes it; the messages write the
resource with its group (deployments.apps), which no custom resource's kind
of the same name can take.

The write records the paths on the object (the annotation
apply-hygiene.io/handed-over, as field manager kubectl-hygiene-handover),
then patches last-applied; each patch first tests that last-applied is
still the one read: when an apply changes it in between, the write fails and
nothing is kept. A map or list that a deletion leaves empty goes too. Drop the
paths from your manifest as well (-f checks which ones it still sets): an
apply of a manifest that sets them takes them back.`,
		Example: `  kubectl hygiene handover deployments.apps/web -n shop spec.replicas
  kubectl hygiene handover deployment/web 'spec.template.spec.containers[name=web].image' -f web.yaml
  kubectl hygiene handover statefulset/db spec.replicas --dry-run -o json`,
		RunE: cli.RunE(o),
	}
	cmd.Flags().StringVarP(&o.Manifest, "filename", "f", "", "the manifest you apply: handover says which of the paths it still sets")
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "send the write as a server-side dry run: nothing is stored")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "output format: json or yaml (default: text)")
	o.kube.AddFlags(cmd.Flags())
	return cmd
}

// Complete reads the object, the paths and the namespace.
func (o *Options) Complete(_ *cobra.Command, args []string) error {
	if len(args) < 2 {
		return cli.BadInput(errors.New("name the object as KIND/NAME and at least one PATH, e.g. deployment/web spec.replicas"))
	}
	var err error
	if o.Kind, o.Name, err = cli.KindAndName(args[:1]); err != nil {
		return err
	}
	for _, s := range args[1:] {
		p, err := merge.ParsePath(cli.UnquoteWord(s))
		if err != nil {
			return cli.BadInput(fmt.Errorf("path %q: %w", s, err))
		}
		o.Paths = append(o.Paths, p)
	}
	if o.Namespace, err = cli.NamespaceOf(o.kube); err != nil {
		return cli.BadInput(err)
	}
	return nil
}

// Validate checks the flags.
func (o *Options) Validate() error { return cli.ValidOutput(o.Output) }

// Run reads the object, writes its last-applied without the paths, and
// says what the next apply no longer touches.
func (o *Options) Run(ctx context.Context) error {
	c, err := o.connect(o.kube)
	if err != nil {
		return err
	}
	obj, err := c.Get(ctx, o.Kind, o.Name, o.Namespace)
	if err != nil {
		return err
	}
	ref := merge.RefOf(obj)
	without, err := merge.LastAppliedWithout(obj, o.Paths)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitFailure, Err: fmt.Errorf("%s %s: %w; nothing written", ref.Kind, cli.ObjectName(ref), err)}
	}
	if err := o.write(ctx, c, obj, without); err != nil {
		return err
	}
	out := outcome{Object: ref, DryRun: o.DryRun}
	for _, p := range o.Paths {
		out.HandedOver = append(out.HandedOver, p.String())
	}
	if o.Manifest != "" {
		if out.ManifestStillSets, err = o.stillSet(obj); err != nil {
			return err
		}
	}
	if o.Output != "" {
		return cli.PrintStructured(o.Out, o.Output, out)
	}
	return printText(o.Out, out, o.Manifest)
}

// write records the paths as handed over (merge.HandedOverAnnotation), so
// that apply-hygiene does not report their new writer's values as
// orphans, and then patches obj's last-applied to without as the manager
// that owns it (see fieldManager). Both patches test last-applied as
// read, and the second also the record as written: a hand-over in between
// that wrote its own record over it fails this one, rather than leave a
// field out of last-applied that the record does not name.
//
// The record is written first and as its own field manager
// (merge.HandoverRecordManager), not inside last-applied's patch: kubectl
// apply --server-side's migration hands every field of the Update
// managers that own last-applied to the server-side applier, whose next
// apply would then delete the record its manifest does not hold, and with
// it the hand-over. A record written before a last-applied patch that
// failed only names fields last-applied still has, which are never
// orphans; write takes it back all the same (takeBackRecord).
func (o *Options) write(ctx context.Context, c Cluster, obj *unstructured.Unstructured, without string) error {
	ref := merge.RefOf(obj)
	record, err := merge.RecordHandedOver(obj.Object, o.Paths)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitFailure, Err: fmt.Errorf("%s %s: %w; nothing written", ref.Kind, cli.ObjectName(ref), err)}
	}
	manager, err := fieldManager(obj)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitFailure, Err: fmt.Errorf("%s %s: %w; nothing written", ref.Kind, cli.ObjectName(ref), err)}
	}
	guard := annotationOp("test", merge.LastAppliedAnnotation, obj.GetAnnotations()[merge.LastAppliedAnnotation])
	recorded, err := o.patch(ctx, c, obj, merge.HandoverRecordManager, guard, annotationOp("add", merge.HandedOverAnnotation, record))
	if err != nil {
		return o.failed(ctx, c, obj, "the record of hand-overs", "", err)
	}
	ops := []map[string]any{guard}
	if !o.DryRun {
		// A dry run of the record stored nothing to test.
		ops = append(ops, annotationOp("test", merge.HandedOverAnnotation, record))
	}
	ops = append(ops, annotationOp("replace", merge.LastAppliedAnnotation, without))
	if _, err := o.patch(ctx, c, obj, manager, ops...); err != nil {
		o.takeBackRecord(ctx, c, obj, recorded, record)
		return o.failed(ctx, c, obj, "the last-applied", record, err)
	}
	return nil
}

// annotationOp is a JSON patch operation on the annotation key.
func annotationOp(op, key string, value any) map[string]any {
	return map[string]any{"op": op, "path": merge.AnnotationPointer(key), "value": value}
}

// patch sends the JSON patch ops to obj as manager (a server dry run with
// --dry-run=server) and returns the object as the server left it.
func (o *Options) patch(ctx context.Context, c Cluster, obj *unstructured.Unstructured, manager string, ops ...map[string]any) (*unstructured.Unstructured, error) {
	patch, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("encoding the patch: %w", err)
	}
	opts := metav1.PatchOptions{FieldManager: manager}
	if o.DryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return c.Patch(ctx, o.Kind, obj, types.JSONPatchType, patch, opts)
}

// takeBackRecord puts obj's record of hand-overs back as it was read,
// when nothing changed the object since the record's patch left it as
// recorded: once anything has, the record may be another hand-over's too
// (one of the same path, which changed nothing), and a record left behind
// only names fields last-applied still has. Best effort; a dry run stored
// nothing.
func (o *Options) takeBackRecord(ctx context.Context, c Cluster, obj, recorded *unstructured.Unstructured, written string) {
	if o.DryRun || obj.GetAnnotations()[merge.HandedOverAnnotation] == written {
		return
	}
	back := map[string]any{"op": "remove", "path": merge.AnnotationPointer(merge.HandedOverAnnotation)}
	if was, ok := obj.GetAnnotations()[merge.HandedOverAnnotation]; ok {
		back = annotationOp("replace", merge.HandedOverAnnotation, was)
	}
	unchanged := map[string]any{"op": "test", "path": "/metadata/resourceVersion", "value": recorded.GetResourceVersion()}
	_, _ = o.patch(ctx, c, obj, merge.HandoverRecordManager, unchanged, annotationOp("test", merge.HandedOverAnnotation, written), back)
}

// failed is the error of the patch of what: the advice to run handover
// again when last-applied, or the record, changed since they were read
// (the patch's guard failed, whatever status the server gave that), and
// whether the record this run wrote (ours, if any) stays.
func (o *Options) failed(ctx context.Context, c Cluster, obj *unstructured.Unstructured, what, ours string, err error) error {
	ref := merge.RefOf(obj)
	name := ref.Kind + " " + cli.ObjectName(ref)
	read := obj.GetAnnotations()
	now, getErr := c.Get(ctx, o.Kind, obj.GetName(), obj.GetNamespace())
	if getErr != nil {
		return fmt.Errorf("writing %s of %s: %w", what, name, err)
	}
	record := now.GetAnnotations()[merge.HandedOverAnnotation]
	stays := ours != "" && record == ours && record != read[merge.HandedOverAnnotation]
	written := "nothing written"
	if stays {
		written = "the record of the hand-over it wrote stays"
	}
	switch {
	case now.GetAnnotations()[merge.LastAppliedAnnotation] != read[merge.LastAppliedAnnotation]:
		return &cli.ExitError{Code: cli.ExitFailure, Err: fmt.Errorf("%s: last-applied changed since it was read (an apply in between?); %s, run handover again: %w", name, written, err)}
	case record != read[merge.HandedOverAnnotation] && record != ours:
		return &cli.ExitError{Code: cli.ExitFailure, Err: fmt.Errorf("%s: its record of hand-overs changed since it was read (another hand-over in between?); %s, run handover again: %w", name, written, err)}
	case stays:
		return fmt.Errorf("writing %s of %s: %w; %s", what, name, err, written)
	}
	return fmt.Errorf("writing %s of %s: %w", what, name, err)
}

// fieldManager is the field manager the hand-over writes as: the one
// Update manager that owns last-applied, so that the annotation stays its
// (merge.LastAppliedUpdaters), or kubectl apply's own when none does, as
// kubectl apply edit-last-applied writes. When several own it, a write as
// one would take it from the others, and kubectl apply --server-side would
// then not upgrade their fields: it refuses, as the audit's fix does.
func fieldManager(obj *unstructured.Unstructured) (string, error) {
	switch owners := merge.LastAppliedUpdaters(obj); len(owners) {
	case 0:
		return merge.ClientSideApplyManager, nil
	case 1:
		return owners[0], nil
	default:
		return "", fmt.Errorf("last-applied is owned by %s: a write as one would take it from the others, and kubectl apply --server-side would then leave their fields behind", strings.Join(owners, " and "))
	}
}

// stillSet returns the paths that the manifest's object of the same group,
// kind and name still sets (a custom resource's kind may be named like a
// built-in one).
func (o *Options) stillSet(obj *unstructured.Unstructured) ([]string, error) {
	objs, err := o.read(o.Manifest, o.In)
	if err != nil {
		return nil, cli.BadInput(err)
	}
	for _, m := range objs {
		if m.GroupVersionKind().GroupKind() != obj.GroupVersionKind().GroupKind() || m.GetName() != obj.GetName() {
			continue
		}
		set := []string{}
		for _, p := range o.Paths {
			if _, ok := merge.JSONPointer(m.Object, p); ok {
				set = append(set, p.String())
			}
		}
		return set, nil
	}
	return nil, cli.BadInput(fmt.Errorf("%s has no %s %s", o.Manifest, obj.GetKind(), obj.GetName()))
}

// printText prints the hand-over for a person.
func printText(w io.Writer, r outcome, manifest string) error {
	dry := ""
	if r.DryRun {
		dry = " (server dry run: nothing stored)"
	}
	name := r.Object.Kind + " " + cli.ObjectName(r.Object)
	fmt.Fprintf(w, "%s: last-applied no longer has %s%s\n", name, strings.Join(r.HandedOver, ", "), dry)
	fmt.Fprintln(w, "The next kubectl apply neither sets nor deletes them: they are their new writer's.")
	switch {
	case manifest == "":
		fmt.Fprintln(w, "Drop them from your manifest too: an apply of a manifest that sets them takes them back.")
	case len(r.ManifestStillSets) > 0:
		fmt.Fprintf(w, "%s still sets %s: drop it before the next apply, or that apply takes it back.\n", manifest, strings.Join(r.ManifestStillSets, ", "))
	default:
		fmt.Fprintf(w, "%s sets none of them.\n", manifest)
	}
	return nil
}
