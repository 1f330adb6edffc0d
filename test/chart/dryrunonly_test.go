package chart_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// removalProofs without audit.fix grants patch on the reviewed kinds only
// for dry runs, and the chart renders the ValidatingAdmissionPolicy (and
// its binding) that denies the service account any write to exactly those
// kinds that is not a dry run, but its own policy ConfigMaps. With
// audit.fix (real patches the user asked for) or removalProofs=false (no
// patch), no policy. test/e2e/audit's TestAuditFixServerOff runs it on an API server.
func TestDryRunOnlyPolicyGuardsTheRemovalProofsPatch(t *testing.T) {
	patches := asPatch(auditClusterRules, []rbacv1.PolicyRule{{APIGroups: []string{"example.com"}, Resources: []string{"widgets"}, Verbs: []string{"list"}}})
	tests := map[string]struct {
		set        []string
		wantPolicy bool
	}{
		"removalProofs (the default) without audit.fix: the policy":   {wantPolicy: true},
		"removalProofs with audit.fix: no policy, the audit patches":  {set: []string{"--set", "audit.fix=true", "--set", noConditions}},
		"removalProofs=false: no patch, no policy":                    {set: []string{"--set", "removalProofs=false"}},
		"audit.fix without the audit: removalProofs' patch, a policy": {set: []string{"--set", "audit.fix=true", "--set", "audit.enabled=false"}, wantPolicy: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := decode(t, render(t, "full", tc.set...))
			var kinds []string
			for _, o := range objs {
				if o.GetAPIVersion() == "admissionregistration.k8s.io/v1" && o.GetKind() != "MutatingWebhookConfiguration" && o.GetKind() != "ValidatingWebhookConfiguration" {
					kinds = append(kinds, o.GetKind()+"/"+o.GetName())
				}
			}
			if !tc.wantPolicy {
				if len(kinds) != 0 {
					t.Errorf("rendered %q, want no policy", kinds)
				}
				return
			}
			if diff := cmp.Diff([]string{"ValidatingAdmissionPolicy/ah-apply-hygiene-dry-run-only", "ValidatingAdmissionPolicyBinding/ah-apply-hygiene-dry-run-only"}, kinds); diff != "" {
				t.Fatalf("policies (-want +got):\n%s", diff)
			}
			policy := only[admissionregistrationv1.ValidatingAdmissionPolicy](t, objs, "ValidatingAdmissionPolicy")
			all := admissionregistrationv1.RuleWithOperations{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete},
			}
			var want []admissionregistrationv1.NamedRuleWithOperations
			for _, p := range patches {
				r := all
				r.APIGroups, r.APIVersions, r.Resources = p.APIGroups, []string{"*"}, p.Resources
				want = append(want, admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: r})
			}
			wantSpec := admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
				MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: want},
				MatchConditions: []admissionregistrationv1.MatchCondition{
					{Name: "the-webhooks-service-account", Expression: "request.userInfo.username == 'system:serviceaccount:apply-hygiene:ah-apply-hygiene'"},
					{Name: "not-its-policy-configmaps", Expression: "!(request.namespace == 'apply-hygiene' && request.resource.group == '' && request.resource.resource == 'configmaps')"},
				},
				Validations: []admissionregistrationv1.Validation{{
					Expression: "request.dryRun",
					Reason:     ptr.To(metav1.StatusReasonForbidden),
					Message:    "apply-hygiene's service account may write the reviewed kinds only as a server-side dry run (removalProofs)",
				}},
			}
			if diff := cmp.Diff(wantSpec, policy.Spec); diff != "" {
				t.Errorf("policy (-want +got):\n%s", diff)
			}
			binding := only[admissionregistrationv1.ValidatingAdmissionPolicyBinding](t, objs, "ValidatingAdmissionPolicyBinding")
			wantBinding := admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName:        "ah-apply-hygiene-dry-run-only",
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			}
			if diff := cmp.Diff(wantBinding, binding.Spec); diff != "" {
				t.Errorf("binding (-want +got):\n%s", diff)
			}
		})
	}
}
