package diff

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/judge"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
	"github.com/apply-hygiene/apply-hygiene/webhook"
)

// The equivalence test runs the fixtures through the webhook's review
// path (webhook.Reviewer's validating handler, which evaluates every
// decision, repairs included) and through the CLI's diff and explain
// paths (Options.diffOne and the webhooks it has review the predicted
// UPDATE through internal/review; Explain and the judge's audit input, judge.Judge.LiveInput), with
// one policy engine configuration on each side, and asserts that they
// decide alike.
//
// Which pairs are comparable:
//
//   - A client-side apply (captured reviews deployment-apply*,
//     statefulset-apply-after-undo; every merge/testdata case, whose apply
//     the test sends to the webhook as kubectl would, old = live, new =
//     the merged result): diff of the manifest (the new last-applied)
//     against the old object. Rule, action, message and paths must be
//     identical, whatever the review core classifies the UPDATE as (an
//     apply that changes nothing but last-applied is save-config, and
//     both sides decide nothing). The CLI's request is the reviewed
//     request's user (what whoami returns when connected) with
//     kubectl-client-side-apply.
//   - An imperative write (edit, patch, set, label, annotate, scale):
//     the webhook judges the request, explain the stored object after it
//     (the audit's rules). Their messages differ by design (a request vs
//     a stored object), and so may actions (the audit has no user, so no
//     service-account action): what both see is which fields drifted from
//     last-applied. Every imperative-edit path of the webhook must be an
//     imperative-edit or apply-reverts-drift finding of explain. kubectl
//     edit is the exception: it rewrites last-applied with the field, so
//     the stored object shows no drift (the webhook judges the edit
//     against last-applied as it was).
//   - Not comparable: server-side applies and replace --save-config (the
//     CLI predicts client-side applies only), rollout undo and restart
//     (stale-last-applied needs the revisions, which explain does not
//     read; restart changes no owned field), controllers' writes (never
//     reported), CREATE (the webhook reviews updates only; diff says
//     "would be created" and finds nothing: checked).
//   - policy/testdata holds policy inputs, not objects: neither driver
//     runs on them, and diff builds no policy input of its own (the review
//     core builds it, as for the webhook), so there is nothing to compare.

// analyzer is shared by the CLI's side of every case.
var analyzer = merge.NewAnalyzer()

// engineSetup is one policy configuration on both sides.
type engineSetup struct {
	// config and dirs are given to the server and to the CLI's flags.
	config policy.Config
	dirs   []string
	// labels are the labels of every namespace.
	labels map[string]string
}

func engineSetups() map[string]engineSetup {
	return map[string]engineSetup{
		"bundled rules, default configuration": {},
		"no-edit-in-prod, orphaned-field denied, in a prod namespace": {
			config: policy.Config{Rules: map[string]policy.RuleConfig{
				string(policy.RuleOrphanedField): {Action: policy.ActionDeny},
				"no-edit-in-prod":                {ServiceAccountAction: policy.ActionWarn},
			}},
			dirs:   []string{filepath.Join("..", "..", "..", "docs", "examples", "no-edit-in-prod")},
			labels: map[string]string{"env": "prod"},
		},
	}
}

// sides are the webhook's engine and the CLI's judge for one setup.
type sides struct {
	server *policy.Engine
	cli    *judge.Judge
	labels map[string]string
}

func newSides(t *testing.T, s engineSetup) sides {
	t.Helper()
	server, err := policy.New(t.Context(), policy.WithConfig(s.config), policy.WithDirs(s.dirs...))
	if err != nil {
		t.Fatal(err)
	}
	flags := judge.PolicyFlags{Dirs: s.dirs}
	if s.config.Rules != nil {
		raw, err := yaml.Marshal(s.config)
		if err != nil {
			t.Fatal(err)
		}
		flags.Config = filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(flags.Config, raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var stderr strings.Builder
	cli, err := flags.Load(t.Context(), nil, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	sd := sides{server: server, cli: cli, labels: s.labels}
	cli.Labels = func(_ context.Context, ns string) map[string]string { return sd.namespaceLabels(ns) }
	return sd
}

// namespaceLabels are the labels both sides see: the API server's name
// label and the setup's.
func (s sides) namespaceLabels(ns string) map[string]string {
	labels := map[string]string{"kubernetes.io/metadata.name": ns}
	maps.Copy(labels, s.labels)
	return labels
}

// review runs req through the webhook's validating handler and returns
// the input and every decision it evaluated; nil when it reviewed
// nothing.
func (s sides) review(t *testing.T, req *admissionv1.AdmissionRequest, objects []*unstructured.Unstructured) (*policy.Input, []policy.Decision) {
	t.Helper()
	var in *policy.Input
	var decisions []policy.Decision
	rec := policy.EvaluatorFunc(func(ctx context.Context, i *policy.Input) ([]policy.Decision, error) {
		ds, err := s.server.Evaluate(ctx, i)
		in, decisions = i, ds
		return ds, err
	})
	r := webhook.NewReviewer(rec, snapshot{objects: objects, sides: s})
	resp := r.Validating().Handle(t.Context(), admission.Request{AdmissionRequest: *req})
	if resp.Result != nil && resp.Result.Code >= 500 {
		t.Fatalf("webhook errored: %s", resp.Result.Message)
	}
	return in, decisions
}

// snapshot is a webhook.Cluster on a captured list of objects.
type snapshot struct {
	objects []*unstructured.Unstructured
	sides   sides
}

var _ webhook.Cluster = snapshot{}

func (c snapshot) Object(_ context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	for _, o := range c.objects {
		if strings.EqualFold(o.GetKind()+"s", gvr.Resource) && o.GetNamespace() == namespace && o.GetName() == name {
			return o.DeepCopy(), nil
		}
	}
	return nil, fmt.Errorf("reading %s %s/%s: not found", gvr.Resource, namespace, name)
}

func (c snapshot) Revisions(_ context.Context, obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, o := range c.objects {
		if (o.GetKind() == "ReplicaSet" || o.GetKind() == "ControllerRevision") && metav1.IsControlledBy(o, obj) {
			out = append(out, o.DeepCopy())
		}
	}
	return out, nil
}

func (c snapshot) NamespaceLabels(_ context.Context, name string) (map[string]string, error) {
	return c.sides.namespaceLabels(name), nil
}

// cliDiff predicts the client-side apply of manifest onto live through
// diff's path, as user: diffOne's UPDATE, reviewed by diff's webhooks.
func (s sides) cliDiff(t *testing.T, manifest, live *unstructured.Unstructured, user policy.User) (entry, []judge.Finding) {
	t.Helper()
	o := &Options{analyzer: func() *merge.Analyzer { return analyzer }}
	item, err := o.diffOne(manifest, []*unstructured.Unstructured{live})
	if err != nil {
		t.Fatalf("diff: %v", err)
	}
	if item.live == nil {
		return item, []judge.Finding{}
	}
	s.cli.User = user
	ds, err := s.cli.Webhooks(analyzer).Apply(t.Context(), item.live, item.written)
	if err != nil {
		t.Fatal(err)
	}
	return item, judge.FindingsOf(ds, item.Object)
}

// cliExplain explains obj through explain's path.
func (s sides) cliExplain(t *testing.T, obj *unstructured.Unstructured) []judge.Finding {
	t.Helper()
	ex, err := analyzer.Explain(obj)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	fs, err := s.cli.Findings(t.Context(), s.cli.LiveInput(t.Context(), obj, ex.Analysis))
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func userOf(req *admissionv1.AdmissionRequest) policy.User {
	u := policy.User{Username: req.UserInfo.Username, Groups: slices.Clone(req.UserInfo.Groups),
		ServiceAccount: strings.HasPrefix(req.UserInfo.Username, "system:serviceaccount:")}
	if u.Groups == nil {
		u.Groups = []string{}
	}
	return u
}

func decode(t *testing.T, raw []byte) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		t.Fatalf("decoding object: %v", err)
	}
	return obj
}

func lastAppliedOf(t *testing.T, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	return decode(t, []byte(obj.GetAnnotations()[merge.LastAppliedAnnotation]))
}

func loadReview(t *testing.T, path string) (*admissionv1.AdmissionRequest, []*unstructured.Unstructured) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(raw, &review); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	raw, err = os.ReadFile(strings.TrimSuffix(path, ".json") + ".cluster.json")
	if err != nil {
		t.Fatal(err)
	}
	list := &unstructured.UnstructuredList{}
	if err := list.UnmarshalJSON(raw); err != nil {
		t.Fatalf("decoding the cluster of %s: %v", path, err)
	}
	var objects []*unstructured.Unstructured
	for i := range list.Items {
		objects = append(objects, &list.Items[i])
	}
	return review.Request, objects
}
