package audit

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
)

// pagedDeployments serves n clean Deployments in pages of the requested
// limit, with the offset as the continue token, and records each request.
type pagedDeployments struct {
	items    []unstructured.Unstructured
	requests []string
}

func newPagedDeployments(t *testing.T, n int) *pagedDeployments {
	t.Helper()
	clean := readObjects(t, "deployments/clean.yaml")[0]
	p := &pagedDeployments{}
	for i := range n {
		d := clean.DeepCopy()
		d.SetName(fmt.Sprintf("web-%03d", i))
		d.SetUID("")
		// last-applied names "web": rename it too, or it is invalid.
		la := d.GetAnnotations()
		key := "kubectl.kubernetes.io/last-applied-configuration"
		la[key] = strings.Replace(la[key], `"name":"web",`, fmt.Sprintf(`"name":"web-%03d",`, i), 1)
		d.SetAnnotations(la)
		p.items = append(p.items, *d)
	}
	return p
}

func (p *pagedDeployments) react(action clienttesting.Action) (bool, runtime.Object, error) {
	opts := action.(clienttesting.ListActionImpl).GetListOptions()
	p.requests = append(p.requests, fmt.Sprintf("limit=%d continue=%q", opts.Limit, opts.Continue))
	start := 0
	if opts.Continue != "" {
		start, _ = strconv.Atoi(opts.Continue)
	}
	end := min(start+int(opts.Limit), len(p.items))
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "apps/v1", "kind": "DeploymentList"}}
	list.Items = append(list.Items, p.items[start:end]...)
	if end < len(p.items) {
		list.SetContinue(strconv.Itoa(end))
	}
	return true, list, nil
}

func TestScanPagesThroughLists(t *testing.T) {
	paged := newPagedDeployments(t, 7)
	client := newFakeClient()
	client.PrependReactor("list", "deployments", paged.react)
	var progress []Progress
	s := NewScanner(client, testAnalyzer(t), testEngine(t), WithPageSize(3), WithProgress(func(p Progress) { progress = append(progress, p) }))
	// The fake client keeps limit and continue for namespaced lists only.
	report, err := s.Scan(t.Context(), Target{Namespace: "shop", Resources: DefaultResources()[:1]})
	if err != nil {
		t.Fatal(err)
	}
	wantRequests := []string{`limit=3 continue=""`, `limit=3 continue="3"`, `limit=3 continue="6"`}
	if diff := cmp.Diff(wantRequests, paged.requests); diff != "" {
		t.Errorf("list requests (-want +got):\n%s", diff)
	}
	if report.Objects != 7 || len(report.Findings) != 0 || len(report.Errors) != 0 {
		t.Errorf("objects %d, findings %v, errors %v", report.Objects, report.Findings, report.Errors)
	}
	var objects []int
	for _, p := range progress {
		objects = append(objects, p.Objects)
	}
	if diff := cmp.Diff([]int{3, 6, 7}, objects); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}

func TestScanDefaultPageSize(t *testing.T) {
	paged := newPagedDeployments(t, 1)
	client := newFakeClient()
	client.PrependReactor("list", "deployments", paged.react)
	s := NewScanner(client, testAnalyzer(t), testEngine(t))
	if _, err := s.Scan(t.Context(), Target{Namespace: "shop", Resources: DefaultResources()[:1]}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`limit=500 continue=""`}, paged.requests); diff != "" {
		t.Errorf("list requests (-want +got):\n%s", diff)
	}
}

func TestScanListErrorStopsTheScan(t *testing.T) {
	client := newFakeClient()
	client.PrependReactor("list", "statefulsets", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, fmt.Errorf("connection refused")
	})
	s := NewScanner(client, testAnalyzer(t), testEngine(t))
	_, err := s.Scan(t.Context(), Target{})
	if err == nil || err.Error() != "listing statefulsets.apps: connection refused" {
		t.Errorf("error = %v", err)
	}
}

func TestScanStopsOnARepeatedContinueToken(t *testing.T) {
	client := newFakeClient()
	client.PrependReactor("list", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
		list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "apps/v1", "kind": "DeploymentList"}}
		list.SetContinue("again")
		return true, list, nil
	})
	s := NewScanner(client, testAnalyzer(t), testEngine(t))
	_, err := s.Scan(t.Context(), Target{Namespace: "shop", Resources: DefaultResources()[:1]})
	if err == nil || err.Error() != `listing deployments.apps: the server sent continue token "again" twice` {
		t.Errorf("error = %v", err)
	}
}
