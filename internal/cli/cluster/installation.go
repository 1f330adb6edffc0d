package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// The chart's ConfigMaps (charts/apply-hygiene/templates/configmap.yaml):
// <fullname>-config holds config.yaml, the server's --policy-config;
// <fullname>-policies holds policy.extraPolicies, the server's
// --policy-dir. Both carry the chart's name label. ConfigMaps labelled
// apply-hygiene.io/policy=rego in the same namespace are user policies
// too (policy.ConfigMapSource).
const (
	chartNameLabel       = "app.kubernetes.io/name"
	chartName            = "apply-hygiene"
	chartConfigKey       = "config.yaml"
	chartPoliciesSuffix  = "-policies"
	selfSubjectReviewAPI = "authentication.k8s.io/v1"
)

var (
	configMapsGVR         = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespacesGVR         = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	selfSubjectReviewsGVR = schema.GroupVersionResource{Group: "authentication.k8s.io", Version: "v1", Resource: "selfsubjectreviews"}
)

// DefaultConfigFrom says that the default configuration is used.
const DefaultConfigFrom = "the default policy configuration"

// Installation is the policy configuration and user policies of an
// installed chart.
type Installation struct {
	// Namespace is where the chart is installed.
	Namespace string
	// Config is the chart's policy configuration; the defaults when it
	// has none.
	Config policy.Config
	// ConfigFrom says where Config comes from, for the verbs' stderr.
	ConfigFrom string
	// Modules are the user policies, by name (policy.WithModules).
	Modules map[string]string
	// Note says why the installation could not be read, if so.
	Note string
}

// Installation reads the chart's ConfigMaps in namespace. When they
// cannot be read, the defaults are used and Note says why.
func (c *Cluster) Installation(ctx context.Context, namespace string) Installation {
	inst := Installation{Namespace: namespace, ConfigFrom: DefaultConfigFrom}
	list, err := c.dynamic.Resource(configMapsGVR).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		inst.Note = fmt.Sprintf("no apply-hygiene installation read in namespace %s (%v); set --hygiene-namespace, or --policy-config and --policy-dir", namespace, err)
		return inst
	}
	var rego []*corev1.ConfigMap
	for i := range list.Items {
		cm, err := toConfigMap(&list.Items[i])
		if err != nil {
			continue
		}
		switch {
		case cm.Labels[policy.ConfigMapLabel] == policy.ConfigMapLabelValue:
			rego = append(rego, cm)
		case cm.Labels[chartNameLabel] != chartName:
		case cm.Data[chartConfigKey] != "" && inst.ConfigFrom == DefaultConfigFrom:
			cfg, err := DecodePolicyConfig([]byte(cm.Data[chartConfigKey]), "configmap "+namespace+"/"+cm.Name)
			if err != nil {
				inst.Note = err.Error() + "; using the defaults"
				continue
			}
			inst.Config, inst.ConfigFrom = cfg, "policy configuration from configmap "+namespace+"/"+cm.Name
		case strings.HasSuffix(cm.Name, chartPoliciesSuffix):
			rego = append(rego, cm)
		}
	}
	if inst.ConfigFrom == DefaultConfigFrom && len(rego) == 0 && inst.Note == "" {
		inst.Note = fmt.Sprintf("no apply-hygiene ConfigMaps in namespace %s; set --hygiene-namespace to where the chart is installed", namespace)
	}
	slices.SortFunc(rego, func(a, b *corev1.ConfigMap) int { return strings.Compare(a.Name, b.Name) })
	inst.Modules = policy.ConfigMapModules(rego)
	return inst
}

func toConfigMap(u *unstructured.Unstructured) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cm); err != nil {
		return nil, fmt.Errorf("decoding configmap %s: %w", u.GetName(), err)
	}
	return cm, nil
}

// WhoAmI returns the user the API server authenticates the kubeconfig's
// credentials as (kubectl auth whoami); nobody when it cannot tell.
func (c *Cluster) WhoAmI(ctx context.Context) policy.User {
	review := &unstructured.Unstructured{Object: map[string]any{"apiVersion": selfSubjectReviewAPI, "kind": "SelfSubjectReview"}}
	out, err := c.dynamic.Resource(selfSubjectReviewsGVR).Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return policy.User{Groups: []string{}}
	}
	var r authenticationv1.SelfSubjectReview
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(out.Object, &r); err != nil {
		return policy.User{Groups: []string{}}
	}
	u := policy.User{Username: r.Status.UserInfo.Username, Groups: r.Status.UserInfo.Groups,
		ServiceAccount: strings.HasPrefix(r.Status.UserInfo.Username, "system:serviceaccount:")}
	if u.Groups == nil {
		u.Groups = []string{}
	}
	return u
}

// NamespaceLabels returns the labels of a namespace; none when it cannot
// be read (the enforcement label then does not apply, as in the audit).
func (c *Cluster) NamespaceLabels(ctx context.Context, name string) map[string]string {
	set, _ := c.namespaceLabels(ctx, name)
	return set
}

// namespaceLabels returns the labels of a namespace, and false, with
// none, when it cannot be read.
func (c *Cluster) namespaceLabels(ctx context.Context, name string) (map[string]string, bool) {
	if c.labels != nil {
		return c.labels.remembered(ctx, name, c.readNamespaceLabels)
	}
	return c.readNamespaceLabels(ctx, name)
}

// readNamespaceLabels reads the labels of a namespace from the API
// server: namespaceLabels without memory.
func (c *Cluster) readNamespaceLabels(ctx context.Context, name string) (map[string]string, bool) {
	ns, err := c.dynamic.Resource(namespacesGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return map[string]string{}, false
	}
	if ns.GetLabels() == nil {
		return map[string]string{}, true
	}
	return ns.GetLabels(), true
}

// DecodePolicyConfig decodes and validates a policy.Config as the server
// reads its --policy-config; what names the document in errors.
func DecodePolicyConfig(raw []byte, what string) (policy.Config, error) {
	var cfg policy.Config
	if err := yaml.UnmarshalStrict(raw, &cfg); err != nil {
		return cfg, fmt.Errorf("decoding %s: %w", what, err)
	}
	if errs := cfg.Validate(); len(errs) > 0 {
		return cfg, fmt.Errorf("validating %s: %w", what, errs.ToAggregate())
	}
	return cfg, nil
}
