package chart_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// The permissions the server needs, exactly (design: least privilege).
// A test of the server can compare what the code calls with these lists.
var (
	// eventsRule records events on the objects in their namespaces: the
	// webhook's on a denied or warned write (--admission-events, on by
	// default) and the periodic audit's.
	eventsRule = rbacv1.PolicyRule{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}}
	// hpaRule keeps the cache of HorizontalPodAutoscalers (list, then
	// watch) that replicas-autoscaled reads.
	hpaRule = rbacv1.PolicyRule{APIGroups: []string{"autoscaling"}, Resources: []string{"horizontalpodautoscalers"}, Verbs: []string{"list", "watch"}}
	// clusterRules are cluster-wide reads for the analysis, and events.
	clusterRules = []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets"}, Verbs: []string{"get"}},
		{APIGroups: []string{"apps"}, Resources: []string{"controllerrevisions", "replicasets"}, Verbs: []string{"list"}},
		hpaRule,
		eventsRule,
	}
	// allClusterRules are clusterRules for kinds=all: the parents of every
	// built-in /scale the preset intercepts.
	allClusterRules = []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"replicationcontrollers"}, Verbs: []string{"get"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "replicasets", "statefulsets"}, Verbs: []string{"get"}},
		{APIGroups: []string{"apps"}, Resources: []string{"controllerrevisions", "replicasets"}, Verbs: []string{"list"}},
		hpaRule,
		eventsRule,
	}
	// namespaceRules are in the release namespace only.
	namespaceRules = []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "patch", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create", "get", "update"}},
	}
	// auditClusterRules let the periodic audit list what it audits.
	auditClusterRules = []rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"daemonsets", "deployments", "statefulsets"}, Verbs: []string{"list"}},
	}
	// commonAuditListRules are what the periodic audit lists with
	// kinds=common: every kind of the preset but Secrets (listing them
	// would read every Secret's value).
	commonAuditListRules = []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps", "namespaces", "serviceaccounts", "services"}, Verbs: []string{"list"}},
		{APIGroups: []string{"apps"}, Resources: []string{"daemonsets", "deployments", "statefulsets"}, Verbs: []string{"list"}},
		{APIGroups: []string{"autoscaling"}, Resources: []string{"horizontalpodautoscalers"}, Verbs: []string{"list"}},
		{APIGroups: []string{"batch"}, Resources: []string{"cronjobs", "jobs"}, Verbs: []string{"list"}},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses", "networkpolicies"}, Verbs: []string{"list"}},
		{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: []string{"list"}},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterrolebindings", "clusterroles", "rolebindings", "roles"}, Verbs: []string{"list"}},
	}
	// widgetsCRDRule reads the CRD of widgets.example.com, the extra kind
	// with scale of the full and all scenarios: the field its /scale sets.
	widgetsCRDRule = rbacv1.PolicyRule{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"},
		ResourceNames: []string{"widgets.example.com"}, Verbs: []string{"get"}}
	// proofRules are removalProofs' patch (server-side dry runs only) on
	// the kinds the default preset reviews.
	proofRules = asPatch(auditClusterRules)
	// selfManagedClusterRules let the certs package inject the caBundle.
	selfManagedClusterRules = []rbacv1.PolicyRule{
		{
			APIGroups:     []string{"admissionregistration.k8s.io"},
			Resources:     []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"},
			ResourceNames: []string{"ah-apply-hygiene"},
			Verbs:         []string{"get", "patch", "update"},
		},
	}
	// selfManagedNamespaceRules let the certs package keep its Secret.
	// create cannot be limited by name.
	selfManagedNamespaceRules = []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"ah-apply-hygiene-tls"}, Verbs: []string{"get", "update"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
	}
)

func TestRBACIsExactlyWhatTheServerCalls(t *testing.T) {
	widgets := rbacv1.PolicyRule{APIGroups: []string{"example.com"}, Resources: []string{"widgets"}, Verbs: []string{"get"}}
	widgetsList := rbacv1.PolicyRule{APIGroups: []string{"example.com"}, Resources: []string{"widgets"}, Verbs: []string{"list"}}
	tests := map[string]struct {
		wantCluster, wantNamespace []rbacv1.PolicyRule
	}{
		"default": {
			wantCluster:   concat(clusterRules, proofRules, selfManagedClusterRules),
			wantNamespace: concat(namespaceRules, selfManagedNamespaceRules),
		},
		"cert-manager": {wantCluster: concat(clusterRules, proofRules), wantNamespace: namespaceRules},
		"url":          {wantCluster: concat(clusterRules, proofRules), wantNamespace: namespaceRules},
		"full": {
			wantCluster: concat(clusterRules[:2], []rbacv1.PolicyRule{widgets, widgetsCRDRule}, clusterRules[2:], auditClusterRules,
				[]rbacv1.PolicyRule{widgetsList}, asPatch(auditClusterRules, []rbacv1.PolicyRule{widgetsList})),
			wantNamespace: namespaceRules,
		},
		// Services, Secrets, RBAC ...: the server reads none of them back,
		// and the cluster-scoped extra kind has no scale; the audit lists
		// them all but Secrets, and the extra kind.
		"common": {
			wantCluster: concat(clusterRules, commonAuditListRules,
				[]rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"persistentvolumes"}, Verbs: []string{"list"}}},
				// audit.reports.format=openreports: server-side apply of
				// new reports needs create, and the publisher lists its own.
				[]rbacv1.PolicyRule{{APIGroups: []string{"openreports.io"}, Resources: []string{"clusterreports", "reports"}, Verbs: []string{"create", "list", "patch"}}},
				asPatch(commonAuditListRules, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"persistentvolumes"}, Verbs: []string{"list"}}}),
				selfManagedClusterRules),
			wantNamespace: concat(namespaceRules, selfManagedNamespaceRules),
		},
		// Every kind, but get only on the parents of the /scale requests
		// it intercepts (and the CRD of the custom one, by name): never on
		// Secrets or anything else.
		"all": {
			wantCluster:   concat(allClusterRules[:3], []rbacv1.PolicyRule{widgets, widgetsCRDRule}, allClusterRules[3:], asPatch(commonAuditListRules, []rbacv1.PolicyRule{widgetsList}), selfManagedClusterRules),
			wantNamespace: concat(namespaceRules, selfManagedNamespaceRules),
		},
	}
	for scenario, tc := range tests {
		t.Run(scenario, func(t *testing.T) {
			objs := decode(t, render(t, scenario))
			cr := only[rbacv1.ClusterRole](t, objs, "ClusterRole")
			if diff := cmp.Diff(tc.wantCluster, cr.Rules); diff != "" {
				t.Errorf("ClusterRole rules (-want +got):\n%s", diff)
			}
			role := only[rbacv1.Role](t, objs, "Role")
			if diff := cmp.Diff(tc.wantNamespace, role.Rules); diff != "" {
				t.Errorf("Role rules (-want +got):\n%s", diff)
			}
			if role.Namespace != releaseNamespace {
				t.Errorf("the Role is in namespace %q, want the release namespace", role.Namespace)
			}
			crb := only[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding")
			rb := only[rbacv1.RoleBinding](t, objs, "RoleBinding")
			wantSubjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "ah-apply-hygiene", Namespace: releaseNamespace}}
			for kind, got := range map[string][]rbacv1.Subject{"ClusterRoleBinding": crb.Subjects, "RoleBinding": rb.Subjects} {
				if diff := cmp.Diff(wantSubjects, got); diff != "" {
					t.Errorf("%s subjects (-want +got):\n%s", kind, diff)
				}
			}
		})
	}
}

// asPatch is the rules of lists with the verb patch instead of theirs.
func asPatch(lists ...[]rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, r := range concat(lists...) {
		r.Verbs = []string{"patch"}
		out = append(out, r)
	}
	return out
}

func concat(lists ...[]rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var all []rbacv1.PolicyRule
	for _, l := range lists {
		all = append(all, l...)
	}
	return all
}

// The server gets an intercepted object only as the parent of a /scale
// request (internal/review's objects), and a CRD only to find where the
// /scale of its custom resource sets the count: in every scenario the
// ClusterRole's get rules, but for namespaces, name exactly the parents of
// the /scale subresources the webhooks intercept, and its get by name of
// CRDs exactly <parent>.<group> of those outside the built-in groups.
func TestRBACGetsExactlyTheScaleParents(t *testing.T) {
	for _, scenario := range scenarios {
		t.Run(scenario, func(t *testing.T) {
			objs := decode(t, render(t, scenario))
			vwc := only[admissionregistrationv1.ValidatingWebhookConfiguration](t, objs, "ValidatingWebhookConfiguration")
			want := map[string]bool{}
			for _, rule := range vwc.Webhooks[0].Rules {
				for _, res := range rule.Resources {
					parent, ok := strings.CutSuffix(res, "/scale")
					if !ok {
						continue
					}
					for _, g := range rule.APIGroups {
						want[g+"/"+parent] = true
						if g != "" && g != "apps" {
							want["apiextensions.k8s.io/customresourcedefinitions "+parent+"."+g] = true
						}
					}
				}
			}
			got := map[string]bool{}
			for _, rule := range only[rbacv1.ClusterRole](t, objs, "ClusterRole").Rules {
				if !slices.Contains(rule.Verbs, "get") {
					continue
				}
				for _, g := range rule.APIGroups {
					for _, res := range rule.Resources {
						switch {
						case g+"/"+res == "/namespaces":
						case len(rule.ResourceNames) == 0:
							got[g+"/"+res] = true
						case g+"/"+res == "apiextensions.k8s.io/customresourcedefinitions":
							for _, name := range rule.ResourceNames {
								got[g+"/"+res+" "+name] = true
							}
						}
					}
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("get rules differ from the intercepted /scale parents (-want +got):\n%s", diff)
			}
		})
	}
}

// audit.fix adds patch on exactly the kinds the audit lists (the full
// scenario's: the apps workloads and the extra kind), nothing else, and
// the server's --audit-fix; without it, neither (with removalProofs=false:
// their patch is the same rules, checked by
// TestRBACRemovalProofsPatchExactlyTheReviewedKinds).
func TestRBACAuditFixPatchesExactlyTheAuditedKinds(t *testing.T) {
	widgetsList := rbacv1.PolicyRule{APIGroups: []string{"example.com"}, Resources: []string{"widgets"}, Verbs: []string{"list"}}
	widgets := rbacv1.PolicyRule{APIGroups: []string{"example.com"}, Resources: []string{"widgets"}, Verbs: []string{"get"}}
	patches := []rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"daemonsets", "deployments", "statefulsets"}, Verbs: []string{"patch"}},
		{APIGroups: []string{"example.com"}, Resources: []string{"widgets"}, Verbs: []string{"patch"}},
	}
	base := concat(clusterRules[:2], []rbacv1.PolicyRule{widgets, widgetsCRDRule}, clusterRules[2:], auditClusterRules, []rbacv1.PolicyRule{widgetsList})
	tests := map[string]struct {
		set         []string
		wantCluster []rbacv1.PolicyRule
		wantFlag    bool
	}{
		"audit.fix=true patches the audited kinds":      {set: []string{"--set", "audit.fix=true", "--set", noConditions}, wantCluster: concat(base, patches), wantFlag: true},
		"audit.fix=false (the default) patches nothing": {wantCluster: base},
		"audit.fix=true without the audit patches nothing": {
			set:         []string{"--set", "audit.fix=true", "--set", "audit.enabled=false"},
			wantCluster: concat(clusterRules[:2], []rbacv1.PolicyRule{widgets, widgetsCRDRule}, clusterRules[2:]),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := decode(t, render(t, "full", append([]string{"--set", "removalProofs=false"}, tc.set...)...))
			cr := only[rbacv1.ClusterRole](t, objs, "ClusterRole")
			if diff := cmp.Diff(tc.wantCluster, cr.Rules); diff != "" {
				t.Errorf("ClusterRole rules (-want +got):\n%s", diff)
			}
			role := only[rbacv1.Role](t, objs, "Role")
			if diff := cmp.Diff(namespaceRules, role.Rules); diff != "" {
				t.Errorf("Role rules (-want +got):\n%s", diff)
			}
			args := only[appsv1.Deployment](t, objs, "Deployment").Spec.Template.Spec.Containers[0].Args
			if got := slices.Contains(args, "--audit-fix"); got != tc.wantFlag {
				t.Errorf("--audit-fix in the server's args: %t, want %t (args %q)", got, tc.wantFlag, args)
			}
		})
	}
}

// removalProofs (on by default) adds patch on exactly the kinds the
// webhook reviews but Secrets, once even with audit.fix, and passes
// --removal-proofs=false to the server when off; off, no patch at all.
func TestRBACRemovalProofsPatchExactlyTheReviewedKinds(t *testing.T) {
	patches := asPatch(auditClusterRules, []rbacv1.PolicyRule{{APIGroups: []string{"example.com"}, Resources: []string{"widgets"}, Verbs: []string{"list"}}})
	tests := map[string]struct {
		set         []string
		wantPatches []rbacv1.PolicyRule
		wantFlag    bool
	}{
		"removalProofs (the default) patches the reviewed kinds": {wantPatches: patches},
		"removalProofs with audit.fix patches them once":         {set: []string{"--set", "audit.fix=true", "--set", noConditions}, wantPatches: patches},
		"removalProofs=false patches nothing":                    {set: []string{"--set", "removalProofs=false"}, wantFlag: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := decode(t, render(t, "full", tc.set...))
			var got []rbacv1.PolicyRule
			for _, r := range only[rbacv1.ClusterRole](t, objs, "ClusterRole").Rules {
				if slices.Contains(r.Verbs, "patch") && r.APIGroups[0] != "events.k8s.io" {
					got = append(got, r)
				}
			}
			if diff := cmp.Diff(tc.wantPatches, got); diff != "" {
				t.Errorf("ClusterRole patch rules (-want +got):\n%s", diff)
			}
			args := only[appsv1.Deployment](t, objs, "Deployment").Spec.Template.Spec.Containers[0].Args
			if got := slices.Contains(args, "--removal-proofs=false"); got != tc.wantFlag {
				t.Errorf("--removal-proofs=false in the server's args: %t, want %t (args %q)", got, tc.wantFlag, args)
			}
		})
	}
}

// noConditions drops the full scenario's webhook.extraMatchConditions, which
// the chart refuses beside audit.fix (a TestTemplateRejectsContradictions case).
const noConditions = "webhook.extraMatchConditions=null"
