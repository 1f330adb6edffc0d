package main

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

// defaultConfigFrom says that the default configuration is used.
const defaultConfigFrom = "the default policy configuration"

// installation is the policy configuration and user policies of an
// installed chart.
type installation struct {
	namespace  string
	config     policy.Config
	configFrom string
	modules    map[string]string
	// note says why the installation could not be read, if so.
	note string
}

// installation reads the chart's ConfigMaps in namespace. When they
// cannot be read, the defaults are used and note says why.
func (c *cluster) installation(ctx context.Context, namespace string) installation {
	inst := installation{namespace: namespace, configFrom: defaultConfigFrom}
	list, err := c.dynamic.Resource(configMapsGVR).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		inst.note = fmt.Sprintf("no apply-hygiene installation read in namespace %s (%v); set --hygiene-namespace, or --policy-config and --policy-dir", namespace, err)
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
		case cm.Data[chartConfigKey] != "" && inst.configFrom == defaultConfigFrom:
			cfg, err := decodePolicyConfig([]byte(cm.Data[chartConfigKey]), "configmap "+namespace+"/"+cm.Name)
			if err != nil {
				inst.note = err.Error() + "; using the defaults"
				continue
			}
			inst.config, inst.configFrom = cfg, "policy configuration from configmap "+namespace+"/"+cm.Name
		case strings.HasSuffix(cm.Name, chartPoliciesSuffix):
			rego = append(rego, cm)
		}
	}
	if inst.configFrom == defaultConfigFrom && len(rego) == 0 && inst.note == "" {
		inst.note = fmt.Sprintf("no apply-hygiene ConfigMaps in namespace %s; set --hygiene-namespace to where the chart is installed", namespace)
	}
	slices.SortFunc(rego, func(a, b *corev1.ConfigMap) int { return strings.Compare(a.Name, b.Name) })
	inst.modules = policy.ConfigMapModules(rego)
	return inst
}

func toConfigMap(u *unstructured.Unstructured) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cm); err != nil {
		return nil, fmt.Errorf("decoding configmap %s: %w", u.GetName(), err)
	}
	return cm, nil
}

// whoami returns the user the API server authenticates the kubeconfig's
// credentials as (kubectl auth whoami); nobody when it cannot tell.
func (c *cluster) whoami(ctx context.Context) policy.User {
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

// namespaceLabels returns the labels of a namespace; none when it cannot
// be read (the enforcement label then does not apply, as in the audit).
func (c *cluster) namespaceLabels(ctx context.Context, name string) map[string]string {
	ns, err := c.dynamic.Resource(namespacesGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil || ns.GetLabels() == nil {
		return map[string]string{}
	}
	return ns.GetLabels()
}
