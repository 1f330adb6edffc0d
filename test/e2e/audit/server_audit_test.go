package audit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// commonAuditResources is the --audit-resources that the chart renders for
// kinds=common (test/chart holds the flag equal to the ClusterRole's list
// rules): the server runs with it and the chart's RBAC.
const commonAuditResources = "v1/configmaps,v1/namespaces,v1/serviceaccounts,v1/services," +
	"apps/v1/deployments,apps/v1/statefulsets,apps/v1/daemonsets,autoscaling/v2/horizontalpodautoscalers," +
	"batch/v1/cronjobs,batch/v1/jobs,networking.k8s.io/v1/ingresses,networking.k8s.io/v1/networkpolicies," +
	"policy/v1/poddisruptionbudgets,rbac.authorization.k8s.io/v1/clusterrolebindings," +
	"rbac.authorization.k8s.io/v1/clusterroles,rbac.authorization.k8s.io/v1/rolebindings,rbac.authorization.k8s.io/v1/roles"

// An object made by kubectl create has no last-applied: the next audit
// reports it with an event on the object and in the findings gauge.
func testPeriodicAuditReportsWithEventAndGauge(t *testing.T) {
	f := framework.New(t)
	f.Kubectl.Run(t, "create", "deployment", "made-imperatively", "--image=nginx:1.27").MustSucceed(t)

	framework.Eventually(t, 60*time.Second, "a MissingLastApplied event on deployment/made-imperatively", func(ctx context.Context) (bool, error) {
		events, err := f.Client.EventsV1().Events(f.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Regarding.Name == "made-imperatively" && e.Reason == "MissingLastApplied" && e.Type == "Warning" &&
				strings.HasPrefix(e.Note, "[missing-last-applied] Deployment "+f.Namespace+"/made-imperatively") {
				return true, nil
			}
		}
		return false, nil
	})
	gauge := fmt.Sprintf(`apply_hygiene_audit_findings{namespace=%q,rule="missing-last-applied"} 1`, f.Namespace)
	framework.Eventually(t, 30*time.Second, gauge, func(ctx context.Context) (bool, error) {
		return strings.Contains(framework.PollWebhookMetrics(ctx, t), gauge), nil
	})
}

// With kinds=common the audit also lists the other kinds, namespaced and
// cluster-scoped: a ConfigMap and a ClusterRole made by kubectl create get
// their events too.
func testPeriodicAuditCoversTheCommonKinds(t *testing.T) {
	f := framework.New(t)
	f.Kubectl.Run(t, "create", "configmap", "made-imperatively", "--from-literal=mode=fast").MustSucceed(t)
	role := "made-imperatively-" + f.Namespace
	f.Kubectl.Run(t, "create", "clusterrole", role, "--verb=get", "--resource=pods").MustSucceed(t)
	t.Cleanup(func() { f.Kubectl.Run(t, "delete", "clusterrole", role) })

	for _, want := range []struct{ namespace, kind, name, note string }{
		{f.Namespace, "ConfigMap", "made-imperatively", "[missing-last-applied] ConfigMap " + f.Namespace + "/made-imperatively: "},
		{"default", "ClusterRole", role, "[missing-last-applied] ClusterRole " + role + ": "},
	} {
		framework.Eventually(t, 60*time.Second, "a MissingLastApplied event on "+want.kind+" "+want.name, func(ctx context.Context) (bool, error) {
			events, err := f.Client.EventsV1().Events(want.namespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			for _, e := range events.Items {
				if e.Regarding.Kind == want.kind && e.Regarding.Name == want.name && e.Reason == "MissingLastApplied" &&
					e.Type == "Warning" && strings.HasPrefix(e.Note, want.note) {
					return true, nil
				}
			}
			return false, nil
		})
	}
}
