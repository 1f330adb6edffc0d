package audit_test

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Example scans a cluster (here a fake one) holding a Deployment that
// `kubectl create` made: it has no last-applied.
func Example() {
	ctx := context.Background()
	web := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "shop", "uid": "1",
			"managedFields": []any{map[string]any{"manager": "kubectl-create", "operation": "Update", "apiVersion": "apps/v1"}},
		},
		"spec": map[string]any{"replicas": int64(1)},
	}}
	lists := map[schema.GroupVersionResource]string{}
	for _, gvr := range audit.DefaultResources() {
		lists[gvr] = "List"
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, web)

	engine, err := policy.New(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	scanner := audit.NewScanner(client, merge.NewAnalyzer(), engine, audit.WithPageSize(100))
	report, err := scanner.Scan(ctx, audit.Target{Namespace: "shop"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range report.Findings {
		fmt.Println(f.Rule, f.Action, f.Object.Kind, f.Object.Name)
	}
	fmt.Println("deny:", report.Denied())
	// Output:
	// missing-last-applied warn Deployment web
	// deny: false
}

// ExampleNewLeaseSchedule records a scan in the schedule Lease (here of a
// fake cluster) as a Runner does after each successful scan, and reads it
// back as a replica that becomes the leader does: it scans when the
// interval since the recorded start is up.
func ExampleNewLeaseSchedule() {
	ctx := context.Background()
	client := fake.NewClientset()
	schedule := audit.NewLeaseSchedule(client.CoordinationV1(), "apply-hygiene", "apply-hygiene-audit-schedule", "apply-hygiene-5d8f9-x2x7q")
	started := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	scan := audit.ScanRecord{Started: started, Finished: started.Add(2 * time.Minute), Interval: time.Hour}
	if err := schedule.Record(ctx, scan); err != nil {
		fmt.Println(err)
		return
	}
	last, err := schedule.LastRun(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("next scan due:", last.Add(time.Hour).Format(time.RFC3339))
	lease, err := client.CoordinationV1().Leases("apply-hygiene").Get(ctx, "apply-hygiene-audit-schedule", metav1.GetOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("holderIdentity:", *lease.Spec.HolderIdentity)
	fmt.Println("acquireTime:", lease.Spec.AcquireTime.UTC().Format(time.RFC3339))
	fmt.Println("renewTime:", lease.Spec.RenewTime.UTC().Format(time.RFC3339))
	fmt.Println("leaseDurationSeconds:", *lease.Spec.LeaseDurationSeconds)
	// Output:
	// next scan due: 2024-05-01T13:00:00Z
	// holderIdentity: apply-hygiene-5d8f9-x2x7q
	// acquireTime: 2024-05-01T12:00:00Z
	// renewTime: 2024-05-01T12:02:00Z
	// leaseDurationSeconds: 3600
}
