package testverb

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// testFile is one file of test cases (*_test.yaml). Paths in it are
// relative to the file. Values, Config and Policies apply to every case
// unless the case sets its own.
type testFile struct {
	// Values is a Helm values file of the chart; its policy section
	// (rules, breakGlassGroups, exemptions, namespaceLabel, extraPolicies)
	// configures the engine as the chart configures the server.
	Values string `json:"values,omitempty"`
	// Config is the policy configuration (the server's --policy-config).
	Config *policy.Config `json:"config,omitempty"`
	// Policies are Rego files or directories of user policies.
	Policies []string `json:"policies,omitempty"`
	// Cases are the test cases.
	Cases []testCase `json:"cases"`
}

// testCase is one admission request and the decisions it must get.
type testCase struct {
	Name     string         `json:"name"`
	Values   string         `json:"values,omitempty"`
	Config   *policy.Config `json:"config,omitempty"`
	Policies []string       `json:"policies,omitempty"`
	// Review is an AdmissionReview, inline or the path of a JSON or YAML
	// file.
	Review json.RawMessage `json:"review"`
	// NamespaceLabels are the labels of the request's namespace.
	NamespaceLabels map[string]string `json:"namespaceLabels,omitempty"`
	// Objects are what the webhook would read from the cluster: the parent
	// of a /scale request (and the CustomResourceDefinition of a custom
	// resource's, which says where its /scale sets the count), the
	// ReplicaSets or ControllerRevisions of a rollout undo. Inline, or the
	// path of a file (a List, or documents).
	Objects json.RawMessage `json:"objects,omitempty"`
	// Expect are the decisions the webhook carries out: repair and prune
	// of the mutating pass, deny, warn and dryrun of the validating pass.
	Expect []expectedDecision `json:"expect"`
}

// expectedDecision is a decision as a test case states it; an empty
// Message or MessageContains is not compared.
type expectedDecision struct {
	Rule            policy.RuleID `json:"rule"`
	Action          policy.Action `json:"action"`
	Message         string        `json:"message,omitempty"`
	MessageContains string        `json:"messageContains,omitempty"`
}

// loadTestFile reads and checks a file of test cases.
func loadTestFile(path string) (*testFile, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, cli.BadInput(fmt.Errorf("reading %s: %w", path, err))
	}
	var f testFile
	if err := yaml.UnmarshalStrict(raw, &f); err != nil {
		return nil, cli.BadInput(fmt.Errorf("decoding %s: %w", path, err))
	}
	if len(f.Cases) == 0 {
		return nil, cli.BadInput(fmt.Errorf("%s: no cases", path))
	}
	for i, c := range f.Cases {
		if c.Name == "" {
			return nil, cli.BadInput(fmt.Errorf("%s: cases[%d]: name is required", path, i))
		}
		if len(c.Review) == 0 {
			return nil, cli.BadInput(fmt.Errorf("%s: case %q: review is required", path, c.Name))
		}
	}
	return &f, nil
}

// engineSpec is the policy set of a case: the file's unless the case sets
// its own parts.
type engineSpec struct {
	values   string
	config   *policy.Config
	policies []string
}

func (f *testFile) specFor(c testCase, dir string) engineSpec {
	s := engineSpec{values: f.Values, config: f.Config, policies: f.Policies}
	if c.Values != "" {
		s.values = c.Values
	}
	if c.Config != nil {
		s.config = c.Config
	}
	if c.Policies != nil {
		s.policies = c.Policies
	}
	if s.values != "" {
		s.values = filepath.Join(dir, s.values)
	}
	abs := make([]string, len(s.policies))
	for i, p := range s.policies {
		abs[i] = filepath.Join(dir, p)
	}
	s.policies = abs
	return s
}

// key identifies the spec, to build each engine once.
func (s engineSpec) key() string {
	raw, _ := json.Marshal(s.config)
	return s.values + "\x00" + string(raw) + "\x00" + strings.Join(s.policies, "\x00")
}

// chartValues is the policy section of the chart's values.
type chartValues struct {
	Policy struct {
		policy.Config
		ExtraPolicies map[string]string `json:"extraPolicies,omitempty"`
	} `json:"policy"`
}

// newEngine builds the engine of s: the config (from values when given,
// then Config), user policies from files, directories and extraPolicies.
func (s engineSpec) newEngine(ctx context.Context) (*policy.Engine, error) {
	var opts []policy.Option
	cfg := policy.Config{}
	if s.values != "" {
		raw, err := os.ReadFile(s.values)
		if err != nil {
			return nil, cli.BadInput(fmt.Errorf("reading values %s: %w", s.values, err))
		}
		var v chartValues
		if err := yaml.Unmarshal(raw, &v); err != nil {
			return nil, cli.BadInput(fmt.Errorf("decoding values %s: %w", s.values, err))
		}
		cfg = v.Policy.Config
		modules := map[string]string{}
		for name, text := range v.Policy.ExtraPolicies {
			modules[s.values+":extraPolicies/"+name] = text
		}
		opts = append(opts, policy.WithModules(modules))
	}
	if s.config != nil {
		cfg = *s.config
	}
	opts = append(opts, policy.WithConfig(cfg))
	modules := map[string]string{}
	for _, p := range s.policies {
		info, err := os.Stat(p)
		if err != nil {
			return nil, cli.BadInput(fmt.Errorf("reading policies: %w", err))
		}
		if info.IsDir() {
			opts = append(opts, policy.WithDirs(p))
			continue
		}
		text, err := os.ReadFile(p)
		if err != nil {
			return nil, cli.BadInput(fmt.Errorf("reading policies: %w", err))
		}
		modules[p] = string(text)
	}
	opts = append(opts, policy.WithModules(modules))
	e, err := policy.New(ctx, opts...)
	if err != nil {
		return nil, cli.BadInput(err)
	}
	return e, nil
}

// readReview returns the request of the case's AdmissionReview.
func (c testCase) readReview(dir string) (*admissionv1.AdmissionRequest, error) {
	raw := []byte(c.Review)
	if path, ok := rawPath(raw); ok {
		data, err := os.ReadFile(filepath.Join(dir, path))
		if err != nil {
			return nil, cli.BadInput(fmt.Errorf("case %q: reading review: %w", c.Name, err))
		}
		if raw, err = yaml.YAMLToJSON(data); err != nil {
			return nil, cli.BadInput(fmt.Errorf("case %q: decoding review %s: %w", c.Name, path, err))
		}
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(raw, &review); err != nil {
		return nil, cli.BadInput(fmt.Errorf("case %q: decoding review: %w", c.Name, err))
	}
	if review.Request == nil {
		return nil, cli.BadInput(fmt.Errorf("case %q: the AdmissionReview has no request", c.Name))
	}
	return review.Request, nil
}

// rawPath returns the string a raw JSON value holds, if it is one.
func rawPath(raw []byte) (string, bool) {
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)) {
		return "", false
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// offlineCluster answers the webhook's reads from a test case.
type offlineCluster struct {
	objects []*unstructured.Unstructured
	labels  map[string]string
}

var (
	_ review.Cluster      = (*offlineCluster)(nil)
	_ review.ScaleCluster = (*offlineCluster)(nil)
)

func (c testCase) cluster(dir string) (*offlineCluster, error) {
	oc := &offlineCluster{labels: c.NamespaceLabels}
	raw := []byte(c.Objects)
	if len(raw) == 0 || string(raw) == "null" {
		return oc, nil
	}
	if path, ok := rawPath(raw); ok {
		objs, err := cli.ReadObjects(filepath.Join(dir, path), nil)
		if err != nil {
			return nil, fmt.Errorf("case %q: objects: %w", c.Name, err)
		}
		oc.objects = objs
		return oc, nil
	}
	var items []map[string]any
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, cli.BadInput(fmt.Errorf("case %q: objects: %w", c.Name, err))
	}
	for _, m := range items {
		oc.objects = append(oc.objects, &unstructured.Unstructured{Object: m})
	}
	return oc, nil
}

// Object implements review.Cluster.
func (c *offlineCluster) Object(_ context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	for _, o := range c.objects {
		gv, _ := schema.ParseGroupVersion(o.GetAPIVersion())
		if gv.Group == gvr.Group && strings.EqualFold(o.GetKind()+"s", gvr.Resource) && o.GetNamespace() == namespace && o.GetName() == name {
			return o.DeepCopy(), nil
		}
	}
	return nil, fmt.Errorf("reading %s %s/%s: not in the test case's objects", gvr.Resource, namespace, name)
}

// ScaleReplicasPath implements review.ScaleCluster with the
// CustomResourceDefinition <resource>.<group> of the test case's objects.
func (c *offlineCluster) ScaleReplicasPath(_ context.Context, gvr schema.GroupVersionResource) ([]string, error) {
	for _, o := range c.objects {
		if o.GetKind() == "CustomResourceDefinition" && o.GetName() == gvr.Resource+"."+gvr.Group {
			return kube.SpecReplicasPath(o, gvr.Version)
		}
	}
	return nil, fmt.Errorf("reading customresourcedefinition %s.%s: not in the test case's objects", gvr.Resource, gvr.Group)
}

// Revisions implements review.Cluster.
func (c *offlineCluster) Revisions(_ context.Context, obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, o := range c.objects {
		ref := metav1.GetControllerOfNoCopy(o)
		if (o.GetKind() == "ReplicaSet" || o.GetKind() == "ControllerRevision") && ref != nil && ref.UID == obj.GetUID() {
			out = append(out, o.DeepCopy())
		}
	}
	return out, nil
}

// NamespaceLabels implements review.Cluster, with the label the API
// server sets on every namespace.
func (c *offlineCluster) NamespaceLabels(_ context.Context, name string) (map[string]string, error) {
	if name == "" {
		return nil, nil
	}
	labels := map[string]string{"kubernetes.io/metadata.name": name}
	for k, v := range c.labels {
		labels[k] = v
	}
	return labels, nil
}
