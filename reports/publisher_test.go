package reports

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	discoveryfake "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"
)

// recorder keeps the events as "<type> <reason> <action> <kind> <namespace>/<name>: <note>".
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Eventf(regarding runtime.Object, _ runtime.Object, eventtype, reason, action, note string, args ...any) {
	obj := regarding.(*unstructured.Unstructured)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("%s %s %s %s %s/%s: %s", eventtype, reason, action, obj.GetKind(), obj.GetNamespace(), obj.GetName(), fmt.Sprintf(note, args...)))
}

// cluster is a fake API server: discovery that serves the OpenReports
// resources once installed is called, and a dynamic client that keeps
// the objects applied to it as "<kind> <namespace>/<name>".
type cluster struct {
	discovery *discoveryfake.FakeDiscovery
	client    *dynamicfake.FakeDynamicClient
	applied   []string
	objects   map[string]*unstructured.Unstructured
}

func newCluster(existing ...runtime.Object) *cluster {
	lists := map[schema.GroupVersionResource]string{
		{Group: "openreports.io", Version: "v1alpha1", Resource: "reports"}:        "ReportList",
		{Group: "openreports.io", Version: "v1alpha1", Resource: "clusterreports"}: "ClusterReportList",
	}
	c := &cluster{
		discovery: &discoveryfake.FakeDiscovery{Fake: &clienttesting.Fake{}},
		client:    dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, existing...),
		objects:   map[string]*unstructured.Unstructured{},
	}
	c.client.PrependReactor("patch", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
		patch := action.(clienttesting.PatchAction)
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(patch.GetPatch(), &obj.Object); err != nil {
			return true, nil, err
		}
		key := obj.GetKind() + " " + patch.GetNamespace() + "/" + patch.GetName()
		opts := action.(clienttesting.PatchActionImpl).PatchOptions
		c.applied = append(c.applied, fmt.Sprintf("%s %s manager=%s force=%t", key, patch.GetPatchType(), opts.FieldManager, opts.Force != nil && *opts.Force))
		c.objects[key] = obj
		return true, obj, nil
	})
	return c
}

func (c *cluster) install() {
	c.discovery.Resources = []*metav1.APIResourceList{{GroupVersion: "openreports.io/v1alpha1", APIResources: []metav1.APIResource{
		{Name: "reports", Namespaced: true, Kind: "Report"}, {Name: "clusterreports", Kind: "ClusterReport"},
	}}}
}

func (c *cluster) take() []string {
	out := c.applied
	c.applied = nil
	sort.Strings(out)
	return out
}

func existingReport(ns string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("openreports.io/v1alpha1")
	obj.SetKind("Report")
	obj.SetNamespace(ns)
	obj.SetName(Name)
	obj.SetLabels(map[string]string{ManagedByLabel: Source})
	return obj
}

func TestPublisherWaitsForTheCRDsAndSaysSoOnce(t *testing.T) {
	c := newCluster(existingReport("gone"))
	reg := prometheus.NewRegistry()
	rec := &recorder{}
	p, err := NewPublisher(c.client, c.discovery, Options{Format: FormatOpenReports, Registry: reg, Recorder: rec,
		PodNamespace: "apply-hygiene", PodName: "apply-hygiene-0"})
	if err != nil {
		t.Fatal(err)
	}
	gauge := func(v int) string {
		return fmt.Sprintf("# HELP apply_hygiene_reports_crd_missing 1 when the policy report CRDs of the chosen format were missing at the last publish, else 0.\n"+
			"# TYPE apply_hygiene_reports_crd_missing gauge\napply_hygiene_reports_crd_missing{format=\"openreports\"} %d\n", v)
	}
	for range 2 {
		if err := p.Publish(t.Context(), sample(), scanned); err != nil {
			t.Fatalf("Publish without the CRDs: %v, want nil", err)
		}
	}
	if got := c.take(); len(got) != 0 {
		t.Errorf("applied %v without the CRDs", got)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(gauge(1)), "apply_hygiene_reports_crd_missing"); err != nil {
		t.Error(err)
	}
	wantEvent := []string{"Warning ReportsCRDMissing PublishReports Pod apply-hygiene/apply-hygiene-0: The Report and ClusterReport CRDs " +
		"(openreports.io/v1alpha1, reports format openreports) are not installed: the audit's findings are not published as policy reports until they are."}
	if diff := cmp.Diff(wantEvent, rec.events); diff != "" {
		t.Errorf("events after two runs without the CRDs (-want +got):\n%s", diff)
	}

	c.install()
	if err := p.Publish(t.Context(), sample(), scanned); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	// The cluster report, shop's, and gone's (emptied); idle has no
	// finding and no report.
	want := []string{
		"ClusterReport /apply-hygiene application/apply-patch+yaml manager=apply-hygiene force=true",
		"Report gone/apply-hygiene application/apply-patch+yaml manager=apply-hygiene force=true",
		"Report shop/apply-hygiene application/apply-patch+yaml manager=apply-hygiene force=true",
	}
	if diff := cmp.Diff(want, c.take()); diff != "" {
		t.Errorf("applied (-want +got):\n%s", diff)
	}
	if got, ok := c.objects["Report gone/apply-hygiene"].Object["results"]; ok {
		t.Errorf("the emptied report has results %v", got)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(gauge(0)), "apply_hygiene_reports_crd_missing"); err != nil {
		t.Error(err)
	}
	if len(rec.events) != 1 {
		t.Errorf("events = %v, want only the first", rec.events)
	}
}

// A report that cannot be written fails the publish, counted, after the
// others are written; a namespace being deleted since the scan is skipped.
func TestPublisherWritesWhatItCanAndCountsFailures(t *testing.T) {
	tests := map[string]struct {
		err         error
		wantErr     string
		wantFailure float64
	}{
		"a report refused": {
			err:         apierrors.NewForbidden(schema.GroupResource{Group: "openreports.io", Resource: "reports"}, Name, errors.New("no RBAC")),
			wantErr:     `writing Report shop/apply-hygiene: reports.openreports.io "apply-hygiene" is forbidden: no RBAC`,
			wantFailure: 1,
		},
		"a namespace being deleted": {
			err: &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden,
				Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}}}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newCluster()
			c.install()
			c.client.PrependReactor("patch", "reports", func(action clienttesting.Action) (bool, runtime.Object, error) {
				if action.GetNamespace() == "shop" {
					return true, nil, tc.err
				}
				return false, nil, nil
			})
			reg := prometheus.NewRegistry()
			p, err := NewPublisher(c.client, c.discovery, Options{Format: FormatOpenReports, Registry: reg})
			if err != nil {
				t.Fatal(err)
			}
			err = p.Publish(t.Context(), sample(), scanned)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.wantErr {
				t.Errorf("Publish = %q, want %q", got, tc.wantErr)
			}
			if diff := cmp.Diff([]string{"ClusterReport /apply-hygiene application/apply-patch+yaml manager=apply-hygiene force=true"}, c.take()); diff != "" {
				t.Errorf("applied (-want +got):\n%s", diff)
			}
			if n := testutil.ToFloat64(p.metrics.failures); n != tc.wantFailure {
				t.Errorf("apply_hygiene_reports_publish_failures_total = %g, want %g", n, tc.wantFailure)
			}
		})
	}
}
