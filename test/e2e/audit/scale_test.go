package audit_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

var auditObjects = flag.Int("audit-objects", 2000, "Deployments the audit scale test creates; it scans a quarter of them first, then all")

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// The periodic audit's memory is bounded by its page size, not by the
// cluster: it scans a quarter of -audit-objects client-side-applied
// Deployments, then all of them (4× as many objects, 4× as many pages), and
// its peak heap grows by far less than 4×. It logs, for each size, the wall
// time, the peak heap, and the API-server requests it made, and the wall
// time and peak RSS of the built `kubectl hygiene audit` on the same
// objects.
//
//	go test ./test/e2e/audit -run TestAuditScale -v -audit-objects 10000
func TestAuditScale(t *testing.T) {
	f := framework.New(t)
	cfg, err := framework.ControlPlane(t).RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	total := *auditObjects
	var peaks []uint64
	created := 0
	for _, n := range []int{total / 4, total} {
		started := time.Now()
		createDeployments(t, cfg, f.Namespace, created, n)
		t.Logf("created %d Deployments in %s", n-created, time.Since(started).Round(time.Millisecond))
		created = n
		m := measureScan(t, cfg, f.Namespace, audit.DefaultPageSize)
		if m.report.Objects != n || len(m.report.Findings) != 0 || len(m.report.Errors) != 0 {
			t.Fatalf("scan of %d clean Deployments: %d objects, %d findings, %d errors", n, m.report.Objects, len(m.report.Findings), len(m.report.Errors))
		}
		t.Logf("audit of %d objects (page size %d): %s, peak heap +%.1f MiB, %d API requests: %s",
			n, audit.DefaultPageSize, m.took.Round(time.Millisecond), float64(m.peakHeap)/(1<<20), m.requests.total(), m.requests)
		peaks = append(peaks, m.peakHeap)
		took, rss := binaryAudit(t, f)
		t.Logf("kubectl hygiene audit of %d objects: %s, peak RSS %.1f MiB", n, took.Round(time.Millisecond), float64(rss)/(1<<20))
	}
	// What the heap does follow: the page size.
	for _, pageSize := range []int64{100, 2000} {
		m := measureScan(t, cfg, f.Namespace, pageSize)
		t.Logf("audit of %d objects (page size %d): %s, peak heap +%.1f MiB, %d API requests",
			total, pageSize, m.took.Round(time.Millisecond), float64(m.peakHeap)/(1<<20), m.requests.total())
	}
	// 4× the objects; a heap bounded by the cluster would grow 4×.
	if peaks[1] > 2*peaks[0]+(8<<20) {
		t.Errorf("peak heap grew from %.1f MiB to %.1f MiB for 4× the objects: not bounded by the page size",
			float64(peaks[0])/(1<<20), float64(peaks[1])/(1<<20))
	}
}

// createDeployments creates Deployments from..to-1 in namespace as
// `kubectl apply` would (last-applied, field manager
// kubectl-client-side-apply), 16 at a time.
func createDeployments(t *testing.T, cfg *rest.Config, namespace string, from, to int) {
	t.Helper()
	fast := rest.CopyConfig(cfg)
	fast.QPS, fast.Burst = 2000, 2000
	client, err := dynamic.NewForConfig(fast)
	if err != nil {
		t.Fatal(err)
	}
	next := atomic.Int64{}
	next.Store(int64(from))
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < to; i = int(next.Add(1) - 1) {
				obj, err := appliedDeployment(fmt.Sprintf("clean-%05d", i))
				if err == nil {
					_, err = client.Resource(deployments).Namespace(namespace).Create(t.Context(), obj,
						metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("creating Deployments: %v", err)
	}
}

// binaryAudit runs the built `kubectl hygiene audit` (the same scanner) on
// the test's namespace and returns its wall time and peak RSS.
func binaryAudit(t *testing.T, f *framework.Framework) (time.Duration, int64) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), framework.HygieneBinary(t), "audit", "-n", f.Namespace, "-o", "json", "--kubeconfig", f.Kubectl.Kubeconfig)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	started := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl hygiene audit: %v\n%.2000s", err, out)
	}
	took := time.Since(started)
	usage, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no resource usage of kubectl hygiene audit (Linux only)")
	}
	return took, usage.Maxrss << 10 // KiB on Linux
}

// appliedDeployment is a Deployment with no replicas and its manifest as
// last-applied: clean, nothing to find.
func appliedDeployment(name string) (*unstructured.Unstructured, error) {
	manifest := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"app": name}},
		"spec": map[string]any{
			"replicas": int64(0),
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "nginx", "image": "nginx:1.14.2",
					"env": []any{map[string]any{"name": "NAME", "value": name}},
				}}},
			},
		},
	}
	applied, err := json.Marshal(manifest)
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{Object: manifest}
	obj = obj.DeepCopy()
	obj.SetAnnotations(map[string]string{merge.LastAppliedAnnotation: string(applied) + "\n"})
	return obj, nil
}

// scanMeasure is what one audit took.
type scanMeasure struct {
	report   *audit.Report
	took     time.Duration
	peakHeap uint64
	requests *requestCount
}

// measureScan runs the audit of namespace as the server's periodic audit
// does (its scanner and default resources) with pageSize, counting the API
// requests and sampling the heap above what it was before.
func measureScan(t *testing.T, cfg *rest.Config, namespace string, pageSize int64) scanMeasure {
	t.Helper()
	engine, err := policy.New(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	counted := rest.CopyConfig(cfg)
	requests := &requestCount{byKind: map[string]int{}}
	counted.Wrap(func(rt http.RoundTripper) http.RoundTripper { return requests.wrap(rt) })
	client, err := dynamic.NewForConfig(counted)
	if err != nil {
		t.Fatal(err)
	}
	scanner := audit.NewScanner(client, merge.NewAnalyzer(), engine, audit.WithPageSize(pageSize))
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	stop, peak := sampleHeap()
	started := time.Now()
	report, err := scanner.Scan(t.Context(), audit.Target{Namespace: namespace})
	took := time.Since(started)
	stop()
	if err != nil {
		t.Fatalf("audit: %v", err)
	}
	return scanMeasure{report: report, took: took, peakHeap: *peak - min(*peak, before.HeapAlloc), requests: requests}
}

// sampleHeap samples the heap every 5 ms until stop is called; *peak is
// the largest HeapAlloc seen (garbage not yet collected included).
func sampleHeap() (stop func(), peak *uint64) {
	peak = new(uint64)
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			*peak = max(*peak, ms.HeapAlloc)
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); <-finished }, peak
}

// requestCount counts API requests by method and resource.
type requestCount struct {
	mu     sync.Mutex
	byKind map[string]int
}

func (c *requestCount) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		c.mu.Lock()
		c.byKind[req.Method+" "+resourceOf(req.URL.Path)]++
		c.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

// resourceOf is the resource of an API path: /apis/apps/v1/namespaces/x/
// deployments → deployments; /api/v1/namespaces/x → namespaces.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i] == "namespaces" {
			if i+2 < len(parts) {
				return parts[i+2]
			}
			return "namespaces"
		}
	}
	return parts[len(parts)-1]
}

func (c *requestCount) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.byKind {
		n += v
	}
	return n
}

func (c *requestCount) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	kinds := make([]string, 0, len(c.byKind))
	for k, v := range c.byKind {
		kinds = append(kinds, fmt.Sprintf("%s ×%d", k, v))
	}
	sort.Strings(kinds)
	return strings.Join(kinds, ", ")
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
