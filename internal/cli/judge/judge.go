package judge

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// defaultHygieneNamespace is the namespace the chart's documentation
// installs apply-hygiene in (docs/install.md).
const defaultHygieneNamespace = "apply-hygiene"

// PolicyFlags are the policy flags of diff, explain and audit. --policy-config
// and --policy-dir are the server's (cmd/apply-hygiene); when connected,
// the installed chart's configuration and user policies are read from its
// ConfigMaps in --hygiene-namespace.
type PolicyFlags struct {
	// Config is a policy.Config file (YAML or JSON); it replaces the
	// chart's configuration.
	Config string
	// Dirs are directories of user policies, added to the chart's.
	Dirs []string
	// Namespace is where the chart is installed.
	Namespace string
}

// AddFlags adds --policy-config, --policy-dir and --hygiene-namespace to
// fs.
func (p *PolicyFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&p.Config, "policy-config", "", "policy configuration (YAML or JSON, as the server's --policy-config); default: the installed chart's when connected, else the defaults")
	fs.StringSliceVar(&p.Dirs, "policy-dir", nil, "directory of user Rego policies, as the server's --policy-dir (repeatable); added to the installed chart's when connected")
	fs.StringVar(&p.Namespace, "hygiene-namespace", defaultHygieneNamespace, "namespace of the installed apply-hygiene chart, whose policy ConfigMaps are used when connected")
}

// Judge decides about predicted writes with the server's policy engine,
// prepared once, and what the CLI knows of who would write.
type Judge struct {
	// Engine is the server's policy engine, prepared once.
	Engine *policy.Engine
	// User is who would send the apply: the kubeconfig's user as the API
	// server authenticates it when connected, else nobody.
	User policy.User
	// Labels returns the labels of a namespace: read from the cluster
	// when connected, none offline.
	Labels func(ctx context.Context, namespace string) map[string]string
	// Autoscalers finds the HorizontalPodAutoscalers of an object when
	// connected (cluster.Cluster.Autoscalers); nil offline.
	Autoscalers func(ctx context.Context, obj *unstructured.Unstructured) ([]*autoscalingv2.HorizontalPodAutoscaler, error)
	// Removals proves removals with the API server when connected
	// (cluster.Cluster.RemovalSticks); nil offline.
	Removals func(ctx context.Context, live, target *unstructured.Unstructured, pointer string, with ...string) (kube.RemovalVerdict, error)
	// Scope is what the installed chart's webhooks are sent when
	// connected and readable (cluster.Cluster.WebhookScope); nil
	// otherwise.
	Scope *cluster.WebhookScope
	// mapper maps kinds to resources when connected; nil offline.
	mapper meta.RESTMapper
}

// Load prepares the engine (PolicyFlags.Engine) and what the CLI knows of
// who would write: the kubeconfig's user and the cluster's namespaces and
// autoscalers when c is not nil.
func (p *PolicyFlags) Load(ctx context.Context, c *cluster.Cluster, errOut io.Writer) (*Judge, error) {
	engine, err := p.Engine(ctx, c, errOut)
	if err != nil {
		return nil, err
	}
	j := &Judge{Engine: engine, User: policy.User{Groups: []string{}}, Labels: noLabels}
	if c != nil {
		// One run judges many objects: each namespace's labels are read
		// once, for the enforcement label and the webhooks' scope alike.
		c = c.RememberingNamespaceLabels()
		j.User, j.Labels, j.Autoscalers, j.Removals = c.WhoAmI(ctx), c.NamespaceLabels, c.Autoscalers, c.RemovalSticks
		j.mapper, j.Scope = c.Mapper(), c.WebhookScope(ctx)
	}
	return j, nil
}

// Engine prepares the policy engine with the flags and, when c is not
// nil, the installed chart's configuration and user policies, and says on
// errOut which were used, with a note when the installation could not be
// read. Every verb that reads the cluster (diff, explain, audit) decides
// with it.
func (p *PolicyFlags) Engine(ctx context.Context, c *cluster.Cluster, errOut io.Writer) (*policy.Engine, error) {
	inst := cluster.Installation{Namespace: p.Namespace, ConfigFrom: cluster.DefaultConfigFrom}
	if c != nil {
		inst = c.Installation(ctx, p.Namespace)
	}
	cfg, cfgFrom := inst.Config, inst.ConfigFrom
	if p.Config != "" {
		raw, err := os.ReadFile(p.Config)
		if err != nil {
			return nil, cli.BadInput(fmt.Errorf("reading --policy-config: %w", err))
		}
		if cfg, err = cluster.DecodePolicyConfig(raw, "--policy-config "+p.Config); err != nil {
			return nil, cli.BadInput(err)
		}
		cfgFrom = "file " + p.Config
	}
	engine, err := policy.New(ctx, policy.WithConfig(cfg), policy.WithDirs(p.Dirs...), policy.WithModules(inst.Modules))
	if err != nil {
		return nil, cli.BadInput(fmt.Errorf("loading the policies: %w", err))
	}
	fmt.Fprintf(errOut, "using %s and %s\n", cfgFrom, userPolicies(engine))
	if inst.Note != "" {
		fmt.Fprintf(errOut, "note: %s\n", inst.Note)
	}
	return engine, nil
}

// userPolicies counts the modules in force that are not bundled.
func userPolicies(e *policy.Engine) string {
	var n int
	for _, m := range e.Status().Modules {
		if !strings.HasPrefix(m, "rules/") {
			n++
		}
	}
	switch n {
	case 0:
		return "no user policies"
	case 1:
		return "1 user policy"
	}
	return fmt.Sprintf("%d user policies", n)
}

// LoadConnected is Load with the cluster that connect returns when the
// verb reads the cluster (connected), and offline otherwise: diff and
// explain with --live use no installed chart.
func (p *PolicyFlags) LoadConnected(ctx context.Context, connected bool, connect func() (*cluster.Cluster, error), errOut io.Writer) (*Judge, error) {
	var c *cluster.Cluster
	if connected {
		var err error
		if c, err = connect(); err != nil {
			return nil, err
		}
	}
	return p.Load(ctx, c, errOut)
}

// LiveInput is the policy input of a stored object, as the audit builds
// it.
func (j *Judge) LiveInput(ctx context.Context, obj *unstructured.Unstructured, an *merge.Analysis) *policy.Input {
	return audit.Input(obj, j.resource(obj).GroupResource(), an, j.namespaceLabels(ctx, obj.GetNamespace()))
}

// resource is obj's resource, as the messages' commands name it: the
// cluster's mapping when connected, else the one kubectl's own naming
// rules give the kind (deployments for Deployment, ingresses for Ingress),
// which is every built-in kind's.
func (j *Judge) resource(obj *unstructured.Unstructured) schema.GroupVersionResource {
	gvk := obj.GroupVersionKind()
	if j.mapper != nil {
		if m, err := j.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			return m.Resource
		}
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural
}

func (j *Judge) namespaceLabels(ctx context.Context, name string) map[string]string {
	if name == "" {
		return map[string]string{}
	}
	return j.Labels(ctx, name)
}

// noLabels are the namespace labels offline: none.
func noLabels(context.Context, string) map[string]string { return map[string]string{} }

// Findings evaluates in and returns one finding per decision and path.
func (j *Judge) Findings(ctx context.Context, in *policy.Input) ([]Finding, error) {
	ds, err := j.Engine.Evaluate(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("evaluating policies for %s %s: %w", in.Request.Object.Kind, cli.ObjectName(in.Request.Object), err)
	}
	return FindingsOf(ds, in.Request.Object), nil
}

// Explain analyzes a stored object as explain shows it and the audit
// judges it: every field's owner and status, without drift or orphans at
// the fields the ownership rules declare, the orphans whose removal would
// stick, and the policies' findings on the object as it is.
func (j *Judge) Explain(ctx context.Context, analyzer *merge.Analyzer, obj *unstructured.Unstructured) (*merge.Explanation, []Finding, error) {
	ex, err := analyzer.Explain(obj)
	if err != nil {
		return nil, nil, err
	}
	ex = ex.WithoutDeclared(j.Engine.Declared(ex.Analysis))
	j.proveLiveOrphans(ctx, obj, ex)
	fs, err := j.Findings(ctx, j.LiveInput(ctx, obj, ex.Analysis))
	if err != nil {
		return nil, nil, err
	}
	return ex, fs, nil
}
