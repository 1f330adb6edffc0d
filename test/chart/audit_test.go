package chart_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// The periodic audit lists exactly the resources its list rules allow:
// the server's --audit-resources and the ClusterRole's list rules (but
// the revisions a rollout undo restored, which the reviews list) name
// the same resources.
func TestAuditListsWhatItMay(t *testing.T) {
	for _, scenario := range []string{"full", "common"} {
		t.Run(scenario, func(t *testing.T) {
			objs := decode(t, render(t, scenario))
			deploy := only[appsv1.Deployment](t, objs, "Deployment")
			var flag []string
			for _, arg := range deploy.Spec.Template.Spec.Containers[0].Args {
				if v, ok := strings.CutPrefix(arg, "--audit-resources="); ok {
					flag = strings.Split(v, ",")
				}
			}
			if len(flag) == 0 {
				t.Fatal("the server has no --audit-resources")
			}
			var listed []string
			for _, rule := range only[rbacv1.ClusterRole](t, objs, "ClusterRole").Rules {
				if !slices.Equal(rule.Verbs, []string{"list"}) {
					continue
				}
				for _, r := range rule.Resources {
					if rule.APIGroups[0] == "apps" && (r == "controllerrevisions" || r == "replicasets") {
						continue
					}
					listed = append(listed, rule.APIGroups[0]+"/"+r)
				}
			}
			var flagged []string
			for _, spec := range flag {
				parts := strings.Split(spec, "/")
				group := ""
				if len(parts) == 3 {
					group = parts[0]
				}
				flagged = append(flagged, group+"/"+parts[len(parts)-1])
			}
			slices.Sort(listed)
			slices.Sort(flagged)
			if diff := cmp.Diff(listed, flagged); diff != "" {
				t.Errorf("list rules (-) and --audit-resources (+) differ:\n%s", diff)
			}
			if slices.Contains(flagged, "/secrets") {
				t.Error("the audit lists Secrets")
			}
		})
	}
}
