package main

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
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// defaultHygieneNamespace is the namespace the chart's documentation
// installs apply-hygiene in (docs/install.md).
const defaultHygieneNamespace = "apply-hygiene"

// policyFlags are the policy flags of diff, explain and audit. --policy-config
// and --policy-dir are the server's (cmd/apply-hygiene); when connected,
// the installed chart's configuration and user policies are read from its
// ConfigMaps in --hygiene-namespace.
type policyFlags struct {
	// Config is a policy.Config file (YAML or JSON); it replaces the
	// chart's configuration.
	Config string
	// Dirs are directories of user policies, added to the chart's.
	Dirs []string
	// Namespace is where the chart is installed.
	Namespace string
}

func (p *policyFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&p.Config, "policy-config", "", "policy configuration (YAML or JSON, as the server's --policy-config); default: the installed chart's when connected, else the defaults")
	fs.StringSliceVar(&p.Dirs, "policy-dir", nil, "directory of user Rego policies, as the server's --policy-dir (repeatable); added to the installed chart's when connected")
	fs.StringVar(&p.Namespace, "hygiene-namespace", defaultHygieneNamespace, "namespace of the installed apply-hygiene chart, whose policy ConfigMaps are used when connected")
}

// judge decides about predicted writes with the server's policy engine,
// prepared once, and what the CLI knows of who would write.
type judge struct {
	engine *policy.Engine
	// user is who would send the apply: the kubeconfig's user as the API
	// server authenticates it when connected, else nobody.
	user policy.User
	// labels returns the labels of a namespace: read from the cluster
	// when connected, none offline.
	labels func(ctx context.Context, namespace string) map[string]string
	// autoscalers finds the HorizontalPodAutoscalers of an object when
	// connected (cluster.autoscalers); nil offline.
	autoscalers func(ctx context.Context, obj *unstructured.Unstructured) ([]*autoscalingv2.HorizontalPodAutoscaler, error)
	// removals proves removals with the API server when connected
	// (cluster.removalSticks); nil offline.
	removals func(ctx context.Context, live, target *unstructured.Unstructured, pointer string, with ...string) (kube.RemovalVerdict, error)
	// mapper maps kinds to resources when connected; nil offline.
	mapper meta.RESTMapper
}

// load prepares the engine (policyFlags.engine) and what the CLI knows of
// who would write: the kubeconfig's user and the cluster's namespaces and
// autoscalers when c is not nil.
func (p *policyFlags) load(ctx context.Context, c *cluster, errOut io.Writer) (*judge, error) {
	engine, err := p.engine(ctx, c, errOut)
	if err != nil {
		return nil, err
	}
	j := &judge{engine: engine, user: policy.User{Groups: []string{}}, labels: noLabels}
	if c != nil {
		j.user, j.labels, j.autoscalers, j.removals, j.mapper = c.whoami(ctx), c.namespaceLabels, c.autoscalers, c.removalSticks, c.mapper
	}
	return j, nil
}

// engine prepares the policy engine with the flags and, when c is not
// nil, the installed chart's configuration and user policies, and says on
// errOut which were used, with a note when the installation could not be
// read. Every verb that reads the cluster (diff, explain, audit) decides
// with it.
func (p *policyFlags) engine(ctx context.Context, c *cluster, errOut io.Writer) (*policy.Engine, error) {
	inst := installation{namespace: p.Namespace, configFrom: defaultConfigFrom}
	if c != nil {
		inst = c.installation(ctx, p.Namespace)
	}
	cfg, cfgFrom := inst.config, inst.configFrom
	if p.Config != "" {
		raw, err := os.ReadFile(p.Config)
		if err != nil {
			return nil, cli.BadInput(fmt.Errorf("reading --policy-config: %w", err))
		}
		if cfg, err = decodePolicyConfig(raw, "--policy-config "+p.Config); err != nil {
			return nil, cli.BadInput(err)
		}
		cfgFrom = "file " + p.Config
	}
	engine, err := policy.New(ctx, policy.WithConfig(cfg), policy.WithDirs(p.Dirs...), policy.WithModules(inst.modules))
	if err != nil {
		return nil, cli.BadInput(fmt.Errorf("loading the policies: %w", err))
	}
	fmt.Fprintf(errOut, "using %s and %s\n", cfgFrom, userPolicies(engine))
	if inst.note != "" {
		fmt.Fprintf(errOut, "note: %s\n", inst.note)
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

// decodePolicyConfig decodes and validates a policy.Config as the server
// reads its --policy-config.
func decodePolicyConfig(raw []byte, what string) (policy.Config, error) {
	var cfg policy.Config
	if err := yaml.UnmarshalStrict(raw, &cfg); err != nil {
		return cfg, fmt.Errorf("decoding %s: %w", what, err)
	}
	if errs := cfg.Validate(); len(errs) > 0 {
		return cfg, fmt.Errorf("validating %s: %w", what, errs.ToAggregate())
	}
	return cfg, nil
}

// judge loads the policies of a diff: with the installed chart's when it
// reads the cluster (no --live).
func (o *DiffOptions) judge(ctx context.Context) (*judge, error) {
	return loadJudge(ctx, o.LiveFile == "", func() (*cluster, error) { return o.connect(o.kube) }, &o.policies, o.ErrOut)
}

// judge loads the policies of an explain: with the installed chart's when
// it reads the cluster (KIND/NAME).
func (o *ExplainOptions) judge(ctx context.Context) (*judge, error) {
	return loadJudge(ctx, o.LiveFile == "", func() (*cluster, error) { return o.connect(o.kube) }, &o.policies, o.ErrOut)
}

// loadJudge loads policies, with the installed chart's configuration and
// policies when the command reads the cluster (connected).
func loadJudge(ctx context.Context, connected bool, connect func() (*cluster, error), policies *policyFlags, errOut io.Writer) (*judge, error) {
	var c *cluster
	if connected {
		var err error
		if c, err = connect(); err != nil {
			return nil, err
		}
	}
	return policies.load(ctx, c, errOut)
}

// liveInput is the policy input of a stored object, as the audit builds
// it.
func (j *judge) liveInput(ctx context.Context, obj *unstructured.Unstructured, an *merge.Analysis) *policy.Input {
	return audit.Input(obj, j.resource(obj).GroupResource(), an, j.namespaceLabels(ctx, obj.GetNamespace()))
}

// resource is obj's resource, as the messages' commands name it: the
// cluster's mapping when connected, else the one kubectl's own naming
// rules give the kind (deployments for Deployment, ingresses for Ingress),
// which is every built-in kind's.
func (j *judge) resource(obj *unstructured.Unstructured) schema.GroupVersionResource {
	gvk := obj.GroupVersionKind()
	if j.mapper != nil {
		if m, err := j.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			return m.Resource
		}
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural
}

func (j *judge) namespaceLabels(ctx context.Context, name string) map[string]string {
	if name == "" {
		return map[string]string{}
	}
	return j.labels(ctx, name)
}

// noLabels are the namespace labels offline: none.
func noLabels(context.Context, string) map[string]string { return map[string]string{} }

// findings evaluates in and returns one finding per decision and path.
func (j *judge) findings(ctx context.Context, in *policy.Input) ([]Finding, error) {
	ds, err := j.engine.Evaluate(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("evaluating policies for %s %s: %w", in.Request.Object.Kind, cli.ObjectName(in.Request.Object), err)
	}
	return findingsOf(ds, in.Request.Object), nil
}
