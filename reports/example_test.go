package reports_test

import (
	"fmt"
	"time"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
	"github.com/apply-hygiene/apply-hygiene/reports"
)

// Example builds the reports of a scan that found a kubectl scale of a
// Deployment whose last-applied owns replicas, and shows the OpenReports
// object that a Publisher would apply.
func Example() {
	scan := &audit.Report{
		Findings: []audit.Finding{{
			Rule: policy.RuleImperativeEdit, Action: policy.ActionDeny, Path: "spec.replicas",
			Message: "[imperative-edit] Deployment shop/web: spec.replicas was changed outside kubectl apply … first with: kubectl apply edit-last-applied deployment/web -n shop",
			Object:  merge.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}, UID: "1",
		}},
		Objects:    2,
		Namespaces: map[string]int{"shop": 2},
	}
	for _, r := range reports.Build(scan, time.Unix(0, 0), nil, reports.Limits{}) {
		obj, err := reports.FormatOpenReports.Object(r, reports.Limits{})
		if err != nil {
			fmt.Println(err)
			return
		}
		res := r.Results[0]
		fmt.Println(obj.GetKind(), obj.GetNamespace()+"/"+obj.GetName())
		fmt.Println(res.Rule, res.Result, res.Severity, res.Properties["path"])
		fmt.Println("fix:", res.Properties["fix"])
		fmt.Printf("pass=%d fail=%d warn=%d dropped=%s\n", r.Summary.Pass, r.Summary.Fail, r.Summary.Warn,
			obj.GetAnnotations()[reports.DroppedResultsAnnotation])
	}
	// Output:
	// Report shop/apply-hygiene
	// imperative-edit fail medium spec.replicas
	// fix: kubectl apply edit-last-applied deployment/web -n shop
	// pass=1 fail=1 warn=0 dropped=0
}
