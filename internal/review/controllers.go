package review

import (
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// componentUsers are the user names of the Kubernetes components that
// authenticate as themselves, as Kubernetes' bootstrap RBAC policy binds
// them (k8s.io/apiserver/pkg/authentication/user): the API server's own
// loopback client, the controller manager, the scheduler and kube-proxy.
// Other system: names are not components: system:admin (OpenShift's
// administrator) and system:anonymous are people.
var componentUsers = []string{
	"system:apiserver",
	"system:kube-controller-manager",
	"system:kube-scheduler",
	"system:kube-proxy",
}

// kubeControllerManagerAccounts are the kube-system service accounts that
// kube-controller-manager runs its controllers as with
// --use-service-account-credentials: every name its controllers ask the
// client builder for (ClientBuilder.Client, ClientConfig and their OrDie
// forms, NewClient and NewClientConfig with the controller's name) in
// k8s.io/kubernetes v1.37.0 cmd/kube-controller-manager/app. The HPA
// (horizontal-pod-autoscaler) writes /scale as one of them. Other service
// accounts of kube-system are not controllers by their namespace: a
// third-party controller or a GitOps tool's account installed there
// (Argo CD's argocd-manager in a managed cluster) is reviewed like any
// other service account.
var kubeControllerManagerAccounts = []string{
	"attachdetach-controller",
	"bootstrap-signer",
	"certificate-controller",
	"clusterrole-aggregation-controller",
	"controller-discovery",
	"cronjob-controller",
	"daemon-set-controller",
	"deployment-controller",
	"device-taint-eviction-controller",
	"disruption-controller",
	"endpoint-controller",
	"endpointslice-controller",
	"endpointslicemirroring-controller",
	"ephemeral-volume-controller",
	"expand-controller",
	"generic-garbage-collector",
	"horizontal-pod-autoscaler",
	"job-controller",
	"kube-apiserver-serving-clustertrustbundle-publisher",
	"legacy-service-account-token-cleaner",
	"namespace-controller",
	"node-controller",
	"persistent-volume-binder",
	"pod-garbage-collector",
	"podcertificaterequestcleaner",
	"podgroup-protection-controller",
	"pv-protection-controller",
	"pvc-protection-controller",
	"replicaset-controller",
	"replication-controller",
	"resource-claim-controller",
	"resourcepoolstatusrequest-controller",
	"resourcequota-controller",
	"root-ca-cert-publisher",
	"selinux-warning-controller",
	"service-account-controller",
	"service-cidrs-controller",
	"shared-informers",
	"statefulset-controller",
	"storage-version-garbage-collector",
	"storage-version-migrator-controller",
	"token-cleaner",
	"tokens-controller",
	"ttl-after-finished-controller",
	"ttl-controller",
	"validatingadmissionpolicy-status-controller",
	"volumeattributesclass-protection-controller",
}

// nodeUserPrefix is the prefix of the kubelets' user names
// (system:node:<node>).
const nodeUserPrefix = "system:node:"

// ControllerUsers returns the user names whose writes are controllers'
// and never reviewed: Kubernetes' components and kube-controller-manager's
// service accounts, sorted; kubelets (system:node:<node>) are matched by
// prefix besides. The chart's not-a-controller match condition renders the
// same list from charts/apply-hygiene/files/controller-users.json, which
// TestChartControllerUsers keeps equal to it.
func ControllerUsers() []string {
	out := slices.Clone(componentUsers)
	for _, name := range kubeControllerManagerAccounts {
		out = append(out, "system:serviceaccount:kube-system:"+name)
	}
	slices.Sort(out)
	return out
}

// controllerUsers is ControllerUsers as a set.
var controllerUsers = func() map[string]bool {
	out := map[string]bool{}
	for _, u := range ControllerUsers() {
		out[u] = true
	}
	return out
}()

// isController reports whether user is a Kubernetes component, a kubelet
// or one of kube-controller-manager's controllers (see ControllerUsers), or
// one of extra (WithControllerUsers).
func isController(user authenticationv1.UserInfo, extra map[string]bool) bool {
	name := user.Username
	return controllerUsers[name] || extra[name] || strings.HasPrefix(name, nodeUserPrefix)
}
