package reports_test

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	discoveryfake "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

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
			Message: "[imperative-edit] Deployment shop/web: spec.replicas was changed outside kubectl apply … first with: kubectl hygiene handover deployments.apps/web -n shop spec.replicas", Command: "kubectl hygiene handover deployments.apps/web -n shop spec.replicas",
			Object: merge.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}, UID: "1",
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
	// fix: kubectl hygiene handover deployments.apps/web -n shop spec.replicas
	// pass=1 fail=1 warn=0 dropped=0
}

// ExampleNewPublisher publishes a scan to a cluster (here fake clients)
// that serves the OpenReports CRDs: one server-side apply per report.
func ExampleNewPublisher() {
	disc := &discoveryfake.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{{
		GroupVersion: "openreports.io/v1alpha1",
		APIResources: []metav1.APIResource{{Name: "reports", Namespaced: true}, {Name: "clusterreports"}},
	}}}}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		{Group: "openreports.io", Version: "v1alpha1", Resource: "reports"}:        "ReportList",
		{Group: "openreports.io", Version: "v1alpha1", Resource: "clusterreports"}: "ClusterReportList",
	})
	client.PrependReactor("patch", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
		patch := action.(clienttesting.PatchAction)
		fmt.Println(patch.GetPatchType(), patch.GetResource().Resource, patch.GetNamespace()+"/"+patch.GetName())
		return true, nil, nil
	})
	p, err := reports.NewPublisher(client, disc, reports.Options{Format: reports.FormatOpenReports})
	if err != nil {
		fmt.Println(err)
		return
	}
	scan := &audit.Report{
		Findings: []audit.Finding{{Rule: policy.RuleMissingLastApplied, Action: policy.ActionWarn, Message: "[missing-last-applied] …",
			Object: merge.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}}},
		Namespaces: map[string]int{"shop": 1},
	}
	if err := p.Publish(context.Background(), scan, time.Now()); err != nil {
		fmt.Println(err)
	}
	// Output:
	// application/apply-patch+yaml reports shop/apply-hygiene
}
