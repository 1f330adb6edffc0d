package merge_test

import "testing"

// TestDifferentialKinds is TestDifferential for the built-in kinds beyond
// apps/v1 that people kubectl apply (issue 15): each scenario applies v1,
// adds a field that the manifest does not have with a kubectl command,
// changes a field that last-applied owns with another, and applies v2.
// merge must predict exactly what the server stored (the server's
// allocated and defaulted fields included) and find the addition orphaned
// (but a CronJob's suspend, its state) and the change reverted, nothing
// else.
func TestDifferentialKinds(t *testing.T) {
	tests := map[string]scenario{
		"v1 Service: a patched port is orphaned, a drifted targetPort reverted": {
			dir:     "kind-service",
			orphans: []string{"spec.ports[port=9090,protocol=TCP] by kubectl-patch"},
			reverts: []string{"spec.ports[port=80,protocol=TCP].targetPort by kubectl-patch"},
		},
		"v1 ConfigMap: a patched key is orphaned, a drifted key reverted": {
			dir:     "kind-configmap",
			orphans: []string{"data.extra by kubectl-patch"},
			reverts: []string{"data.mode by kubectl-patch"},
		},
		"v1 Secret: a patched key is orphaned, a drifted stringData key reverted": {
			dir:     "kind-secret",
			orphans: []string{"data.extra by kubectl-patch"},
			reverts: []string{"data.password by kubectl-patch"},
		},
		"v1 ServiceAccount: a patched secret is orphaned, a drifted automount reverted": {
			dir:     "kind-serviceaccount",
			orphans: []string{"secrets[name=builder-token] by kubectl-patch"},
			reverts: []string{"automountServiceAccountToken by kubectl-patch"},
		},
		"v1 Namespace: an annotation is orphaned, a relabelled team reverted": {
			dir:     "kind-namespace",
			orphans: []string{"metadata.annotations[example.com/owner] by kubectl-annotate"},
			reverts: []string{"metadata.labels.team by kubectl-label"},
		},
		"networking.k8s.io/v1 Ingress: a patched tls is orphaned, a drifted class reverted": {
			dir:     "kind-ingress",
			orphans: []string{"spec.tls by kubectl-patch"},
			reverts: []string{"spec.ingressClassName by kubectl-patch"},
		},
		"networking.k8s.io/v1 NetworkPolicy: a patched egress is orphaned, a drifted ingress reverted": {
			dir:     "kind-networkpolicy",
			orphans: []string{"spec.egress by kubectl-patch"},
			reverts: []string{"spec.ingress by kubectl-patch"},
		},
		// A patched suspend is the CronJob's state (workloadState), not
		// an orphan.
		"batch/v1 CronJob: a patched suspend is no orphan, a set image reverted": {
			dir:     "kind-cronjob",
			reverts: []string{"spec.jobTemplate.spec.template.spec.containers[name=app].image by kubectl-set"},
		},
		"batch/v1 Job: a patched deadline is orphaned, a drifted parallelism reverted": {
			dir:     "kind-job",
			orphans: []string{"spec.activeDeadlineSeconds by kubectl-patch"},
			reverts: []string{"spec.parallelism by kubectl-patch"},
		},
		"autoscaling/v2 HorizontalPodAutoscaler: a patched behavior is orphaned, a drifted maxReplicas reverted": {
			dir:     "kind-hpa",
			orphans: []string{"spec.behavior by kubectl-patch"},
			reverts: []string{"spec.maxReplicas by kubectl-patch"},
		},
		"policy/v1 PodDisruptionBudget: a patched eviction policy is orphaned, a drifted minAvailable reverted": {
			dir:     "kind-pdb",
			orphans: []string{"spec.unhealthyPodEvictionPolicy by kubectl-patch"},
			reverts: []string{"spec.minAvailable by kubectl-patch"},
		},
		"rbac/v1 Role: an annotation is orphaned, patched rules reverted": {
			dir:     "kind-role",
			orphans: []string{"metadata.annotations[example.com/reviewed-by] by kubectl-annotate"},
			reverts: []string{"rules by kubectl-patch"},
		},
		"rbac/v1 RoleBinding: a label is orphaned, subjects set by kubectl set subject reverted": {
			dir:     "kind-rolebinding",
			orphans: []string{"metadata.labels.team by kubectl-label"},
			reverts: []string{"subjects by kubectl-set"},
		},
		"rbac/v1 ClusterRole: a label is orphaned, a rule changed by kubectl edit reverted": {
			dir:     "kind-clusterrole",
			orphans: []string{"metadata.labels.team by kubectl-label"},
			reverts: []string{"rules by kubectl-edit"},
		},
		"rbac/v1 ClusterRoleBinding: an annotation is orphaned, subjects set by kubectl set subject reverted": {
			dir:     "kind-clusterrolebinding",
			orphans: []string{"metadata.annotations[example.com/ticket] by kubectl-annotate"},
			reverts: []string{"subjects by kubectl-set"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runScenario(t, tc)
		})
	}
}
