package audit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// The audit that found the orphan (its Warning event, recorded after the
// step that fixes when audit.fix is on) left restartedAt as it was, and
// the gauge keeps the finding; the chart granted no patch but the removal
// proofs' dry-run-only one and the server counts no fix.
func testAuditFixOffLeavesTheOrphan(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/web.yaml").MustSucceed(t)
	k.Run(t, "rollout", "restart", "deployment/web").MustSucceed(t)
	restartedAt := k.JSONPath(t, "deployment/web", restartedAtExpr)
	k.Run(t, "apply", "-f", "testdata/web.yaml").MustSucceed(t)

	framework.Eventually(t, 60*time.Second, "an OrphanedField event on deployment/web", func(ctx context.Context) (bool, error) {
		n, err := countEvents(ctx, f, "OrphanedField")
		return n > 0, err
	})
	if got := k.JSONPath(t, "deployment/web", restartedAtExpr); restartedAt == "" || got != restartedAt {
		t.Errorf("restartedAt = %q after the audit, want %q kept", got, restartedAt)
	}
	if n, err := countEvents(t.Context(), f, "AuditFixed"); err != nil || n != 0 {
		t.Errorf("%d AuditFixed events (%v), want none", n, err)
	}
	body := framework.WebhookMetrics(t)
	gauge := fmt.Sprintf(`apply_hygiene_audit_findings{namespace=%q,rule="orphaned-field"} 1`, f.Namespace)
	if !strings.Contains(body, "\n"+gauge+"\n") {
		t.Errorf("no line %q in the metrics", gauge)
	}
	if strings.Contains(body, "apply_hygiene_audit_fixes_total") {
		t.Error("apply_hygiene_audit_fixes_total is exported with audit.fix off")
	}
	role, err := f.Client.RbacV1().ClusterRoles().Get(t.Context(), devenv.Release, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The only patch on deployments is removalProofs' (on by default), and
	// it comes with the policy that makes it dry-run-only
	// (TestRemovalProofsPatchIsDryRunOnly shows a real patch denied).
	patches := 0
	for _, r := range role.Rules {
		if grantsPatch(r, "apps", "deployments") {
			patches++
		}
	}
	_, policyErr := f.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(t.Context(), devenv.Release+"-dry-run-only", metav1.GetOptions{})
	_, bindingErr := f.Client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(t.Context(), devenv.Release+"-dry-run-only", metav1.GetOptions{})
	if patches != 1 || policyErr != nil || bindingErr != nil {
		t.Errorf("with audit.fix off the chart's ClusterRole has %d rules with patch on deployments (want 1, removalProofs'), its dry-run-only policy: %v, binding: %v (want both)",
			patches, policyErr, bindingErr)
	}
}

// countEvents counts the events of reason on deployment web.
func countEvents(ctx context.Context, f *framework.Framework, reason string) (int, error) {
	list, err := f.Client.EventsV1().Events(f.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range list.Items {
		if e.Regarding.Kind == "Deployment" && e.Regarding.Name == "web" && e.Reason == reason {
			n++
		}
	}
	return n, nil
}

// grantsPatch reports whether r grants patch on group's resource.
func grantsPatch(r rbacv1.PolicyRule, group, resource string) bool {
	has := func(list []string, s string) bool {
		for _, x := range list {
			if x == s || x == "*" {
				return true
			}
		}
		return false
	}
	return has(r.APIGroups, group) && has(r.Resources, resource) && has(r.Verbs, "patch")
}
