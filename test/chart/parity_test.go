package chart_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// chartConditions are the names of the chart's own match conditions, in
// their order, for the workloads preset.
var chartConditions = map[string][]string{
	"mutate.apply-hygiene.io":   {"not-a-controller", "not-a-removal-proof", "may-be-repairable"},
	"validate.apply-hygiene.io": {"not-a-controller", "not-a-removal-proof", "may-have-a-decision"},
}

func TestObjectSelectorAndExtraMatchConditionsOnBothWebhooks(t *testing.T) {
	objs := decode(t, render(t, "full"))
	mutating := only[admissionregistrationv1.MutatingWebhookConfiguration](t, objs, "MutatingWebhookConfiguration")
	validating := only[admissionregistrationv1.ValidatingWebhookConfiguration](t, objs, "ValidatingWebhookConfiguration")
	wantSelector := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "example.com/unmanaged", Operator: metav1.LabelSelectorOpDoesNotExist},
	}}
	extra := admissionregistrationv1.MatchCondition{
		Name:       "not-argo-cd",
		Expression: "request.userInfo.username != 'system:serviceaccount:argocd:argocd-application-controller'",
	}
	check := func(name string, selector *metav1.LabelSelector, conditions []admissionregistrationv1.MatchCondition) {
		t.Helper()
		if diff := cmp.Diff(wantSelector, selector); diff != "" {
			t.Errorf("%s objectSelector (-want +got):\n%s", name, diff)
		}
		var names []string
		for _, c := range conditions {
			names = append(names, c.Name)
		}
		if diff := cmp.Diff(append(chartConditions[name], extra.Name), names); diff != "" {
			t.Errorf("%s matchConditions, the chart's first (-want +got):\n%s", name, diff)
		}
		if diff := cmp.Diff(extra, conditions[len(conditions)-1]); diff != "" {
			t.Errorf("%s extra match condition (-want +got):\n%s", name, diff)
		}
	}
	check(mutating.Webhooks[0].Name, mutating.Webhooks[0].ObjectSelector, mutating.Webhooks[0].MatchConditions)
	check(validating.Webhooks[0].Name, validating.Webhooks[0].ObjectSelector, validating.Webhooks[0].MatchConditions)

	def := decode(t, render(t, "default"))
	if s := only[admissionregistrationv1.MutatingWebhookConfiguration](t, def, "MutatingWebhookConfiguration").Webhooks[0].ObjectSelector; s != nil {
		t.Errorf("default objectSelector = %v, want none (every object)", s)
	}
}

func TestExtraEnvFollowsTheChartsOwn(t *testing.T) {
	deploy := only[appsv1.Deployment](t, decode(t, render(t, "full")), "Deployment")
	want := []corev1.EnvVar{
		{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "GOMEMLIMIT", Value: "214748364"},
		{Name: "GODEBUG", Value: "http2debug=1"},
		{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
	}
	if diff := cmp.Diff(want, deploy.Spec.Template.Spec.Containers[0].Env); diff != "" {
		t.Errorf("server env (-want +got):\n%s", diff)
	}
}

func TestPriorityClassName(t *testing.T) {
	tests := map[string]struct {
		extra []string
		want  string
	}{
		"system-cluster-critical by default, as Gatekeeper's chart": {want: "system-cluster-critical"},
		"none when set empty": {extra: []string{"--set", "priorityClassName="}, want: ""},
		"the one set":         {extra: []string{"--set", "priorityClassName=platform-high"}, want: "platform-high"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			deploy := only[appsv1.Deployment](t, decode(t, render(t, "default", tc.extra...)), "Deployment")
			if got := deploy.Spec.Template.Spec.PriorityClassName; got != tc.want {
				t.Errorf("priorityClassName = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNetworkPolicy(t *testing.T) {
	port := func(p int) []networkingv1.NetworkPolicyPort {
		return []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(int32(p)))}}
	}
	tests := map[string]struct {
		scenario string
		extra    []string
		want     []networkingv1.NetworkPolicyIngressRule
	}{
		"from the given peers to the webhook port, from the metrics namespace to the metrics port": {
			scenario: "full",
			want: []networkingv1.NetworkPolicyIngressRule{
				{Ports: port(9443), From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/24"}}}},
				{Ports: port(8080), From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{"kubernetes.io/metadata.name": "observability"}}}}},
			},
		},
		"the defaults: any source to the webhook port only, monitoring to the metrics port": {
			scenario: "default",
			extra:    []string{"--set", "networkPolicy.enabled=true,webhook.port=10443,metrics.port=9090"},
			want: []networkingv1.NetworkPolicyIngressRule{
				{Ports: port(10443)},
				{Ports: port(9090), From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"}}}}},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := decode(t, render(t, tc.scenario, tc.extra...))
			np := only[networkingv1.NetworkPolicy](t, objs, "NetworkPolicy")
			deploy := only[appsv1.Deployment](t, objs, "Deployment")
			if diff := cmp.Diff(deploy.Spec.Selector, &np.Spec.PodSelector); diff != "" {
				t.Errorf("podSelector differs from the Deployment's selector (-deployment +networkpolicy):\n%s", diff)
			}
			if diff := cmp.Diff([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, np.Spec.PolicyTypes); diff != "" {
				t.Errorf("policyTypes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, np.Spec.Ingress); diff != "" {
				t.Errorf("ingress (-want +got):\n%s", diff)
			}
		})
	}
	for name, scenario := range map[string][]string{
		"off by default":             {"default"},
		"none in URL mode (no pods)": {"url", "--set", "networkPolicy.enabled=true"},
		// helm upgrade --reuse-values from a chart without these values.
		"none when the values are missing, as after an upgrade with --reuse-values": {
			"full", "--set", "networkPolicy=null,test=null,extraEnv=null,webhook.objectSelector=null,webhook.extraMatchConditions=null",
		},
	} {
		t.Run(name, func(t *testing.T) {
			for _, o := range decode(t, render(t, scenario[0], scenario[1:]...)) {
				if o.GetKind() == "NetworkPolicy" {
					t.Errorf("rendered NetworkPolicy %s", o.GetName())
				}
			}
		})
	}
}
