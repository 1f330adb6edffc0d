package diff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/judge"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// Options holds the flags and inputs of `kubectl hygiene diff`.
type Options struct {
	// ManifestFile names the manifests in messages: the -f files, or the
	// -k directory.
	ManifestFile string
	// LiveFile holds the live objects, as `kubectl get -o yaml` prints them;
	// empty: they are read from the cluster.
	LiveFile string
	// Output is "", "json" or "yaml".
	Output string

	manifests manifestFlags
	policies  judge.PolicyFlags
	// kube reads the live objects from the cluster when --live is not
	// given.
	kube     cluster.Flags
	analyzer func() *merge.Analyzer
	genericiooptions.IOStreams
}

// NewCmd returns `kubectl hygiene diff`, which reads the live objects
// from the cluster connect returns (without --live) and analyzes the
// applies with analyzer.
func NewCmd(streams genericiooptions.IOStreams, analyzer func() *merge.Analyzer, connect cluster.ConnectFunc) *cobra.Command {
	o := &Options{IOStreams: streams, analyzer: analyzer, kube: cluster.NewFlags(connect)}
	cmd := &cobra.Command{
		Use:   "diff (-f FILENAME [-R] | -k DIR) [--live FILE]",
		Short: "Show what kubectl apply -f MANIFEST would do to the live objects, and its findings",
		Long: `Recompute kubectl apply -f MANIFEST against the live objects exactly as kubectl
does (strategic merge patch for built-in kinds, JSON merge patch for the
others) and print the patch, the resulting object and the findings: fields the
apply reverts, fields it leaves orphaned, replicas it resets, defaulted
dependents, and the state of last-applied. The findings are what
apply-hygiene's webhooks will answer to the UPDATE that the apply sends (the
repairs of the mutating webhook, then the denials, warnings and dry-run
findings of the validating one), decided by the same review code: an apply
that changes nothing but last-applied, for one, is a hand-over of fields
(save-config) and has none. A manifest that last-applied already holds
changes nothing and sends no request: diff says "unchanged" and lists what
stays in the object, the findings of kubectl hygiene explain (under "kept"
with -o json|yaml; they do not set the exit status). The live objects are read from the
cluster, as kubectl diff does (an object that does not exist would be
created), or from --live FILE (kubectl get -o yaml output), where manifest
documents are matched to live documents by group, kind, namespace and name.

-f takes files, directories (-R: recursively) and - for stdin, like kubectl
apply; -k builds a kustomization with the kustomize kubectl builds in.

The exit status is 0 when no finding's action is deny, 1 when one is (kubectl
apply would be denied, as kubectl diff exits 1 when it finds differences),
and 2 or more on errors (2: bad input).`,
		Example: `  # What would applying v3 do to the StatefulSet in the cluster?
  kubectl hygiene diff -f my-app-v3.yaml

  # A directory tree, or a kustomization
  kubectl hygiene diff -f manifests/ -R
  kubectl hygiene diff -k overlays/prod -o json

  # Offline, against saved live objects
  kubectl get statefulset my-app -o yaml > live.yaml
  kubectl hygiene diff -f my-app-v3.yaml --live live.yaml -o json`,
		Args: cli.NoArgs("pass the manifest with -f"),
		RunE: cli.RunE(verb{o}),
	}
	o.manifests.addFlags(cmd.Flags())
	o.policies.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&o.LiveFile, "live", "", "file with the live objects (kubectl get -o yaml); empty: read them from the cluster")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "output format: json or yaml (default: text)")
	o.kube.AddFlags(cmd.Flags())
	return cmd
}

// verb runs diff with its exit statuses (withExitStatus): 1 for "apply
// would be denied", more when diff itself fails, as kubectl diff does.
type verb struct{ *Options }

var _ cli.Verb = verb{}

// Run implements cli.Verb.
func (v verb) Run(ctx context.Context) error { return withExitStatus(v.Options.Run(ctx)) }

// Complete fills in what the flags leave out; it reads nothing.
func (o *Options) Complete(_ *cobra.Command, _ []string) error {
	o.ManifestFile = o.manifests.source()
	return nil
}

// Validate checks the flags.
func (o *Options) Validate() error {
	if err := o.manifests.validate(); err != nil {
		return err
	}
	if o.manifests.readsStdin() && o.LiveFile == "-" {
		return cli.BadInput(errors.New("-f and --live cannot both read stdin"))
	}
	return cli.ValidOutput(o.Output)
}

// Run reads the files, recomputes each apply and prints the outcome.
func (o *Options) Run(ctx context.Context) error {
	manifests, err := o.manifests.read(o.In)
	if err != nil {
		return err
	}
	live, err := o.liveObjects(ctx, manifests)
	if err != nil {
		return err
	}
	j, err := o.judge(ctx)
	if err != nil {
		return err
	}
	adm := j.Webhooks(o.analyzer())
	var items []entry
	for _, m := range manifests {
		item, err := o.diffOne(m, live)
		if err != nil {
			return err
		}
		items = append(items, item)
	}
	relabelled := relabelledNamespaces(items)
	findings, kept := []judge.Finding{}, []judge.Finding{}
	for _, item := range items {
		if item.kept != nil {
			// No UPDATE, so nothing for the webhooks to review; what the
			// object keeps is what explain finds in it.
			_, fs, err := j.Explain(ctx, o.analyzer(), item.kept)
			if err != nil {
				return err
			}
			kept = append(kept, fs...)
		}
		if item.live == nil {
			continue // no UPDATE: nothing for the webhooks to review
		}
		if !relabelled[item.live.GetNamespace()] && !j.Reviewed(ctx, item.live, item.written) {
			fmt.Fprintf(o.ErrOut, "note: %s %s: validatingwebhookconfiguration %s does not send its UPDATE to apply-hygiene (rules, namespaceSelector, objectSelector), so kubectl apply prints nothing of apply-hygiene's for it\n",
				item.Object.Kind, cli.ObjectName(item.Object), strings.Join(j.Scope.Names, ", "))
			continue
		}
		ds, err := adm.Apply(ctx, item.live, item.written)
		if err != nil {
			return fmt.Errorf("reviewing the apply of %s %s: %w", item.Object.Kind, cli.ObjectName(item.Object), err)
		}
		findings = append(findings, judge.FindingsOf(ds, item.Object)...)
	}
	if err := o.print(items, findings, kept); err != nil {
		return err
	}
	// The exit status is the apply's: an unchanged object's own findings
	// deny nothing, as no request is sent.
	actions := make([]string, len(findings))
	for i, f := range findings {
		actions[i] = f.Action
	}
	return outcome(actions)
}

// relabelledNamespaces are the namespaces whose labels the apply of items
// changes: kubectl applies a file's Namespace before what it holds, so
// the API server matches the webhooks' namespaceSelector on the new
// labels, which the cluster does not have yet; diff then judges those
// objects as the webhooks would if they saw them.
func relabelledNamespaces(items []entry) map[string]bool {
	out := map[string]bool{}
	for _, item := range items {
		if item.live != nil && item.Object.Kind == "Namespace" && item.Object.APIVersion == "v1" &&
			!equality.Semantic.DeepEqual(item.live.GetLabels(), item.written.GetLabels()) {
			out[item.live.GetName()] = true
		}
	}
	return out
}

// judge loads the policies of a diff: with the installed chart's when it
// reads the cluster (no --live).
func (o *Options) judge(ctx context.Context) (*judge.Judge, error) {
	return o.policies.LoadConnected(ctx, o.LiveFile == "", o.kube.Connect, o.ErrOut)
}

// entry is the outcome for one manifest document.
type entry struct {
	Object merge.ObjectRef            `json:"object"`
	Patch  json.RawMessage            `json:"patch"`
	Result *unstructured.Unstructured `json:"result"`
	// Created is set when no live object matches: apply would create it.
	Created  bool           `json:"created,omitempty"`
	Strategy merge.Strategy `json:"strategy,omitempty"`
	// live and written are the old and new object of the UPDATE that
	// kubectl apply sends; nil when it sends none (it creates the object,
	// or the patch is empty and it prints "unchanged").
	live, written *unstructured.Unstructured
	// kept is the live object when the patch is empty: the apply leaves
	// it as it is, with whatever explain finds in it.
	kept *unstructured.Unstructured
}

// diffOne recomputes kubectl apply of manifest onto its live object: the
// patch and the UPDATE it sends (old = live, new = the merged result; none
// for an empty patch), which Run has the webhooks review. When live's last-applied is invalid,
// kubectl cannot compute the patch as apply-hygiene does (it fails on one
// that is not JSON): diff shows no patch and has the apply reviewed as if
// it changed nothing, so that admission's invalid-last-applied decision is
// still shown.
func (o *Options) diffOne(manifest *unstructured.Unstructured, live []*unstructured.Unstructured) (entry, error) {
	l, err := matchLive(manifest, live)
	if err != nil {
		return entry{}, err
	}
	if l == nil {
		return created(manifest)
	}
	manifest = manifest.DeepCopy()
	if manifest.GetNamespace() == "" {
		manifest.SetNamespace(l.GetNamespace())
	}
	item := entry{Object: merge.RefOf(l), Patch: json.RawMessage("null"), live: l, written: l}
	if _, err := merge.ParseLastApplied(l); errors.Is(err, merge.ErrInvalidLastApplied) {
		return item, nil
	}
	res, err := o.analyzer().ApplyManifest(manifest, l)
	if err != nil {
		return entry{}, fmt.Errorf("%s %s: %w", manifest.GetKind(), manifest.GetName(), err)
	}
	// The API server defaults a StatefulSet's claim templates again after
	// the patch; without them, the result would differ from live where
	// the stored object never does.
	// It defaults spec.replicas again too, when the manifest leaves it
	// out (merge.WithReplicasDefault).
	res.Result = merge.WithReplicasDefault(merge.WithClaimTemplateDefaults(res.Result))
	// And it defaults again what the patch deletes of a last-applied
	// that recorded the whole object (merge.WithDeletedDefaults).
	if res.Result, err = o.analyzer().WithDeletedDefaults(l, res.Result); err != nil {
		return entry{}, fmt.Errorf("%s %s: %w", manifest.GetKind(), manifest.GetName(), err)
	}
	item.Patch, item.Result, item.Strategy = res.Patch, res.Result, res.Strategy
	if string(res.Patch) == "{}" {
		// kubectl apply sends no request for an empty patch.
		item.live, item.kept = nil, l
		return item, nil
	}
	if item.live, err = asDecoded(l); err != nil {
		return entry{}, fmt.Errorf("%s %s: %w", manifest.GetKind(), manifest.GetName(), err)
	}
	if item.written, err = asDecoded(res.Result); err != nil {
		return entry{}, fmt.Errorf("%s %s: %w", manifest.GetKind(), manifest.GetName(), err)
	}
	return item, nil
}

// asDecoded is obj as the API server hands it to admission after decoding
// it into its Go type: the patched object without the zero values that
// the type omits (a manifest's hostNetwork: false is no field of the
// stored object), and the live object as it was stored (unchanged when
// it was read from the API server). Kinds without a Go type (custom
// resources) are kept as they are.
func asDecoded(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	typed, err := scheme.Scheme.New(obj.GroupVersionKind())
	if err != nil {
		return obj, nil //nolint:nilerr // no Go type: stored as written
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, typed); err != nil {
		return nil, fmt.Errorf("decoding the result as a %s: %w", obj.GroupVersionKind(), err)
	}
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return nil, fmt.Errorf("encoding the decoded result: %w", err)
	}
	for _, p := range podSpecPaths {
		if spec, ok, _ := unstructured.NestedMap(out, p...); ok {
			convertServiceAccount(spec)
			if err := unstructured.SetNestedMap(out, spec, p...); err != nil {
				return nil, fmt.Errorf("converting the service account: %w", err)
			}
		}
	}
	return &unstructured.Unstructured{Object: out}, nil
}

// podSpecPaths are where built-in kinds hold a pod spec.
var podSpecPaths = [][]string{
	{"spec", "template", "spec"},
	{"spec", "jobTemplate", "spec", "template", "spec"},
}

// convertServiceAccount does to a pod spec what the API server's v1
// conversion does before admission: serviceAccountName, or the deprecated
// serviceAccount when the name is empty, is the one service account, and
// both fields hold it (Convert_v1_PodSpec_To_core_PodSpec and back).
func convertServiceAccount(spec map[string]any) {
	name, _ := spec["serviceAccountName"].(string)
	if name == "" {
		name, _ = spec["serviceAccount"].(string)
	}
	if name == "" {
		delete(spec, "serviceAccountName")
		delete(spec, "serviceAccount")
		return
	}
	spec["serviceAccountName"], spec["serviceAccount"] = name, name
}

// created describes an apply that creates the object: kubectl sends the
// manifest with its last-applied annotation.
func created(manifest *unstructured.Unstructured) (entry, error) {
	data, err := merge.ModifiedConfiguration(manifest)
	if err != nil {
		return entry{}, err
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		return entry{}, fmt.Errorf("decoding created object: %w", err)
	}
	return entry{Object: merge.RefOf(manifest), Patch: json.RawMessage("null"), Created: true,
		Result: &unstructured.Unstructured{Object: obj}}, nil
}
