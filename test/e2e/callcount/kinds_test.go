package callcount_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// run is one pass over the kinds: its namespace, the operator's client and
// a suffix for the names of cluster-scoped objects.
type run struct {
	f        *framework.Framework
	operator kubernetes.Interface
	suffix   string
}

// kindCase is one row of the table: the writes that happen to a kind.
type kindCase struct {
	kind string
	// writer says who writes.
	writer string
	// counted are the resources whose writes the row reports,
	// "group/resource[/subresource]".
	counted []string
	// intercepted are the counted resources the common preset's rules
	// match (never /status).
	intercepted []string
	// wantWrites says the writer must have written in the window: a row
	// that counts nothing proves nothing.
	wantWrites bool
	// person marks the control row: a person's write, which the webhook
	// must see.
	person bool
	// setup runs before the window, act inside it and waits for the
	// writes, teardown after it (nil: nothing to undo).
	setup, act, teardown func(t *testing.T, r run)
}

// kindCases are the common kinds, in the order they run.
var kindCases = []kindCase{
	{
		kind: "Deployment", writer: "deployment controller (status)",
		counted: []string{"apps/deployments", "apps/deployments/status"}, intercepted: []string{"apps/deployments"}, wantWrites: true,
		act: func(t *testing.T, r run) {
			apply(t, r, "deployment.yaml")
			waitJSONPath(t, r, "deployment/web", "{.status.observedGeneration}", "1")
		},
	},
	{
		kind: "StatefulSet", writer: "statefulset controller (status)",
		counted: []string{"apps/statefulsets", "apps/statefulsets/status"}, intercepted: []string{"apps/statefulsets"}, wantWrites: true,
		act: func(t *testing.T, r run) {
			apply(t, r, "statefulset.yaml")
			waitJSONPath(t, r, "statefulset/db", "{.status.observedGeneration}", "1")
		},
	},
	{
		kind: "DaemonSet", writer: "daemonset controller (status)",
		counted: []string{"apps/daemonsets", "apps/daemonsets/status"}, intercepted: []string{"apps/daemonsets"}, wantWrites: true,
		act: func(t *testing.T, r run) {
			apply(t, r, "daemonset.yaml")
			waitJSONPath(t, r, "daemonset/agent", "{.status.observedGeneration}", "1")
		},
	},
	{
		kind: "Service", writer: "endpoints and endpointslice controllers",
		counted: []string{"/services", "/services/status", "/endpoints", "discovery.k8s.io/endpointslices"}, intercepted: []string{"/services"},
		act: func(t *testing.T, r run) {
			apply(t, r, "service.yaml")
			waitJSONPath(t, r, "endpointslices -l kubernetes.io/service-name=web", "{.items[0].metadata.labels.kubernetes\\.io/service-name}", "web")
		},
	},
	{
		kind: "Job", writer: "job controller (status)",
		counted: []string{"batch/jobs", "batch/jobs/status"}, intercepted: []string{"batch/jobs"}, wantWrites: true,
		act: func(t *testing.T, r run) {
			apply(t, r, "job.yaml")
			waitJSONPath(t, r, "job/once", "{.status.active}", "1")
		},
	},
	{
		kind: "CronJob", writer: "cronjob controller (a Job, status)",
		counted: []string{"batch/cronjobs", "batch/cronjobs/status"}, intercepted: []string{"batch/cronjobs"}, wantWrites: true,
		act: func(t *testing.T, r run) {
			apply(t, r, "cronjob.yaml")
			waitNonEmpty(t, r, 90*time.Second, "cronjob/ticks", "{.status.lastScheduleTime}")
		},
		// Its schedule would go on writing in the later windows.
		teardown: func(t *testing.T, r run) {
			r.f.Kubectl.Run(t, "delete", "cronjob/ticks", "--wait=true").MustSucceed(t)
		},
	},
	{
		kind: "HorizontalPodAutoscaler", writer: "HPA controller (status, the target's /scale)",
		counted:     []string{"autoscaling/horizontalpodautoscalers", "autoscaling/horizontalpodautoscalers/status", "apps/deployments/scale"},
		intercepted: []string{"autoscaling/horizontalpodautoscalers", "apps/deployments/scale"}, wantWrites: true,
		setup: func(t *testing.T, r run) {
			apply(t, r, "hpa-target.yaml")
			waitJSONPath(t, r, "deployment/scaled", "{.status.observedGeneration}", "1")
		},
		act: func(t *testing.T, r run) {
			apply(t, r, "hpa.yaml")
			waitJSONPath(t, r, "deployment/scaled", "{.spec.replicas}", "2")
		},
	},
	{
		kind: "PodDisruptionBudget", writer: "disruption controller (status)",
		counted: []string{"policy/poddisruptionbudgets", "policy/poddisruptionbudgets/status"}, intercepted: []string{"policy/poddisruptionbudgets"}, wantWrites: true,
		act: func(t *testing.T, r run) {
			apply(t, r, "pdb.yaml")
			waitJSONPath(t, r, "poddisruptionbudget/web", "{.status.observedGeneration}", "1")
		},
	},
	{
		kind: "Ingress", writer: "the operator (an ingress controller's status)",
		counted: []string{"networking.k8s.io/ingresses", "networking.k8s.io/ingresses/status"}, intercepted: []string{"networking.k8s.io/ingresses"}, wantWrites: true,
		setup: func(t *testing.T, r run) { apply(t, r, "ingress.yaml") },
		act:   func(t *testing.T, r run) { reportIngressStatus(t, r, 3) },
	},
	{
		kind: "NetworkPolicy", writer: "nobody",
		counted: []string{"networking.k8s.io/networkpolicies"}, intercepted: []string{"networking.k8s.io/networkpolicies"},
		act: func(t *testing.T, r run) { apply(t, r, "networkpolicy.yaml") },
	},
	{
		kind: "ConfigMap", writer: "the operator (leader election, 3 renewals)",
		counted: []string{"/configmaps"}, intercepted: []string{"/configmaps"}, wantWrites: true,
		act: func(t *testing.T, r run) { renewLeaderElection(t, r, 3) },
	},
	{
		kind: "Secret", writer: "the operator (token Secret, 3 rotations)",
		counted: []string{"/secrets"}, intercepted: []string{"/secrets"}, wantWrites: true,
		act: func(t *testing.T, r run) { rotateTokenSecret(t, r, 3) },
	},
	{
		kind: "ServiceAccount", writer: "nobody",
		counted: []string{"/serviceaccounts"}, intercepted: []string{"/serviceaccounts"},
		act: func(t *testing.T, r run) { apply(t, r, "serviceaccount.yaml") },
	},
	{
		kind: "Role, RoleBinding", writer: "nobody",
		counted:     []string{"rbac.authorization.k8s.io/roles", "rbac.authorization.k8s.io/rolebindings"},
		intercepted: []string{"rbac.authorization.k8s.io/roles", "rbac.authorization.k8s.io/rolebindings"},
		act: func(t *testing.T, r run) {
			apply(t, r, "role.yaml")
			apply(t, r, "rolebinding.yaml")
		},
	},
	{
		kind: "ClusterRole, ClusterRoleBinding", writer: "clusterrole-aggregation controller",
		counted:     []string{"rbac.authorization.k8s.io/clusterroles", "rbac.authorization.k8s.io/clusterrolebindings"},
		intercepted: []string{"rbac.authorization.k8s.io/clusterroles", "rbac.authorization.k8s.io/clusterrolebindings"}, wantWrites: true,
		act: aggregateClusterRole,
	},
	{
		kind: "Namespace", writer: "namespace controller (deletion: finalize, status)",
		counted: []string{"/namespaces", "/namespaces/finalize", "/namespaces/status"}, intercepted: []string{"/namespaces"}, wantWrites: true,
		setup: func(t *testing.T, r run) {
			applyStdin(t, r, fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: callcount-gone-%s\n", r.suffix))
		},
		act: deleteNamespace,
	},
	{
		kind: "ConfigMap (control)", writer: "a person (kubectl label)", person: true,
		counted: []string{"/configmaps"}, intercepted: []string{"/configmaps"}, wantWrites: true,
		setup: func(t *testing.T, r run) { apply(t, r, "settings.yaml") },
		act: func(t *testing.T, r run) {
			r.f.Kubectl.Run(t, "label", "configmap/settings", "reviewed=yes").MustSucceed(t)
		},
	},
}

// apply runs kubectl apply of a testdata file as the admin.
func apply(t *testing.T, r run, file string) {
	t.Helper()
	r.f.Kubectl.Run(t, "apply", "-f", filepath.Join("testdata", file)).MustSucceed(t)
}

// applyStdin runs kubectl apply of a manifest as the admin.
func applyStdin(t *testing.T, r run, manifest string) {
	t.Helper()
	r.f.Kubectl.RunWithInput(t, manifest, "apply", "-f", "-").MustSucceed(t)
}

// waitJSONPath waits until kubectl get prints want for the JSONPath.
func waitJSONPath(t *testing.T, r run, object, expr, want string) {
	t.Helper()
	framework.Eventually(t, 60*time.Second, object+" "+expr+" = "+want, func(context.Context) (bool, error) {
		res := r.f.Kubectl.Run(t, append(splitArgs(object), "-o", "jsonpath="+expr)...)
		return res.ExitCode == 0 && res.Stdout == want, nil
	})
}

// waitNonEmpty waits until kubectl get prints something for the JSONPath.
func waitNonEmpty(t *testing.T, r run, timeout time.Duration, object, expr string) {
	t.Helper()
	framework.Eventually(t, timeout, object+" "+expr+" set", func(context.Context) (bool, error) {
		res := r.f.Kubectl.Run(t, "get", object, "-o", "jsonpath="+expr)
		return res.ExitCode == 0 && res.Stdout != "", nil
	})
}

// splitArgs turns "kind/name" or "kind -l selector" into kubectl get args.
func splitArgs(object string) []string {
	return append([]string{"get"}, strings.Fields(object)...)
}

// renewLeaderElection is client-go's ConfigMap lock: the operator creates
// its leader record and renews it n times, with plain updates.
func renewLeaderElection(t *testing.T, r run, n int) {
	t.Helper()
	ctx := t.Context()
	cms := r.operator.CoreV1().ConfigMaps(r.f.Namespace)
	record := func(i int) map[string]string {
		return map[string]string{"control-plane.alpha.kubernetes.io/leader": `{"holderIdentity":"operator-0","leaseDurationSeconds":15,"renewTime":"` + strconv.Itoa(i) + `"}`}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "operator-leader", Annotations: record(0)}}
	cm, err := cms.Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the leader record: %v", err)
	}
	for i := 1; i <= n; i++ {
		cm.Annotations = record(i)
		if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("renewing the leader record: %v", err)
		}
	}
}

// rotateTokenSecret is an operator keeping a service-account token Secret
// of its own current: it creates it and rewrites the token n times.
func rotateTokenSecret(t *testing.T, r run, n int) {
	t.Helper()
	ctx := t.Context()
	secrets := r.operator.CoreV1().Secrets(r.f.Namespace)
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "operator-token", Annotations: map[string]string{corev1.ServiceAccountNameKey: operatorName}},
		Type:       corev1.SecretTypeServiceAccountToken,
		Data:       map[string][]byte{"token": []byte("t0")},
	}
	s, err := secrets.Create(ctx, s, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the token Secret: %v", err)
	}
	for i := 1; i <= n; i++ {
		s.Data["token"] = []byte("t" + strconv.Itoa(i))
		if s, err = secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("rotating the token Secret: %v", err)
		}
	}
}

// reportIngressStatus is an ingress controller publishing n addresses in
// the Ingress's status.
func reportIngressStatus(t *testing.T, r run, n int) {
	t.Helper()
	ctx := t.Context()
	ingresses := r.operator.NetworkingV1().Ingresses(r.f.Namespace)
	for i := 1; i <= n; i++ {
		ing, err := ingresses.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("reading ingress web: %v", err)
		}
		ing.Status.LoadBalancer.Ingress = append(ing.Status.LoadBalancer.Ingress, networkingv1.IngressLoadBalancerIngress{IP: fmt.Sprintf("192.0.2.%d", i)})
		if _, err := ingresses.UpdateStatus(ctx, ing, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("updating the status of ingress web: %v", err)
		}
	}
}

// aggregateClusterRole makes an aggregated ClusterRole, a ClusterRole it
// aggregates and a binding, and waits for the aggregation controller to
// fill in the rules.
func aggregateClusterRole(t *testing.T, r run) {
	t.Helper()
	name := "callcount-" + r.suffix
	applyStdin(t, r, fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: %[1]s
aggregationRule:
  clusterRoleSelectors:
    - matchLabels: {callcount.apply-hygiene.io/aggregate-to: %[1]s}
rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: %[1]s-part
  labels: {callcount.apply-hygiene.io/aggregate-to: %[1]s}
rules:
  - apiGroups: [""]
    resources: ["configmaps"]
    verbs: ["get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: %[1]s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: %[1]s
subjects:
  - kind: ServiceAccount
    name: robot
    namespace: %[2]s
`, name, r.f.Namespace))
	t.Cleanup(func() {
		r.f.Kubectl.Run(t, "delete", "clusterrolebinding/"+name, "clusterrole/"+name, "clusterrole/"+name+"-part", "--ignore-not-found")
	})
	waitJSONPath(t, r, "clusterrole/"+name, "{.rules[0].verbs[0]}", "get")
}

// deleteNamespace deletes the namespace setup made and waits for the
// namespace controller to finish.
func deleteNamespace(t *testing.T, r run) {
	t.Helper()
	name := "callcount-gone-" + r.suffix
	r.f.Kubectl.Run(t, "delete", "namespace", name, "--wait=false").MustSucceed(t)
	framework.Eventually(t, 60*time.Second, "namespace "+name+" gone", func(ctx context.Context) (bool, error) {
		_, err := r.f.Client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}
