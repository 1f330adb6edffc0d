package memory

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

var unbounded = flag.Bool("unbounded", false, "also run the server with --memory-budget=0 and log its peak RSS (no assertion)")

const (
	// clients is the number of concurrent reviews.
	clients = 16
	// loadTime is how long the clients keep sending.
	loadTime = 10 * time.Second
	// apiServerTimeout is the webhook configurations' timeoutSeconds in
	// the chart, sent with each call as the API server does.
	apiServerTimeout = "5s"
)

// With the chart's default memory limit and GOMEMLIMIT as the chart sets
// it (80 % of the limit), 16 concurrent reviews of two ~1.5 MiB objects each, sent for
// 10 s, keep the server's peak RSS under that limit: the reviews beyond
// the memory budget are answered at once, as the failure policy says,
// with reason overload in the metrics. None is refused or left
// unanswered, and the server is still up at the end.
func TestLargeReviewsStayUnderTheChartMemoryLimit(t *testing.T) {
	limit, goMemLimit := chartMemoryLimit(t), chartGoMemLimit(t)
	bin := buildServer(t)
	body := largeReview(t)
	run := func(t *testing.T, args ...string) (loadResult, int64) {
		s := startServer(t, bin, goMemLimit, args...)
		res := sendLoad(t, s.webhookURL, body)
		hwm := peakRSS(t, s.cmd.Process.Pid)
		if err := s.cmd.Process.Signal(syscall.Signal(0)); err != nil {
			t.Fatalf("the server is not running after the load: %v", err)
		}
		res.metricOverloads = s.overloadMetric(t)
		t.Logf("limit %s, GOMEMLIMIT %d: peak RSS %.1f MiB; %s", resource.NewQuantity(limit, resource.BinarySI), goMemLimit, float64(hwm)/(1<<20), res)
		return res, hwm
	}
	res, hwm := run(t)
	if hwm >= limit {
		t.Errorf("peak RSS %d bytes, over the chart's memory limit of %d", hwm, limit)
	}
	// A review answered at its deadline was admitted too: on a loaded
	// machine a /validate of this review can take longer than 4 s.
	if res.overloads == 0 || res.reviewed+res.timeouts == 0 {
		t.Errorf("want some reviews admitted and some answered as overloaded; %s", res)
	}
	if res.failed > 0 {
		t.Errorf("%d calls failed (no answer, or not HTTP 200): %s", res.failed, res.firstFailure)
	}
	if res.metricOverloads != res.overloads {
		t.Errorf("apply_hygiene_review_errors_total{reason=\"overload\"} = %d, want the %d overload answers", res.metricOverloads, res.overloads)
	}
	if *unbounded {
		t.Run("without a memory budget", func(t *testing.T) { run(t, "--memory-budget=0") })
	}
}

// chartMemoryLimit is resources.limits.memory in the chart's values.yaml.
func chartMemoryLimit(t *testing.T) int64 {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "charts", "apply-hygiene", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values struct {
		Resources struct {
			Limits map[string]string
		}
	}
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatalf("decoding the chart's values: %v", err)
	}
	q, err := resource.ParseQuantity(values.Resources.Limits["memory"])
	if err != nil {
		t.Fatalf("reading resources.limits.memory: %v", err)
	}
	return q.Value()
}

// chartGoMemLimit is the GOMEMLIMIT of the chart's default rendering (its
// snapshot in test/chart, which the chart tests keep current).
func chartGoMemLimit(t *testing.T) int64 {
	t.Helper()
	path := filepath.Join("..", "..", "test", "chart", "testdata", "default", "manifests.golden.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(raw), "- name: GOMEMLIMIT\n")
	value, ok2 := strings.CutPrefix(strings.TrimSpace(strings.SplitN(after, "\n", 2)[0]), "value: ")
	n, err := strconv.ParseInt(strings.Trim(value, `"`), 10, 64)
	if !ok || !ok2 || err != nil {
		t.Fatalf("%s sets no GOMEMLIMIT value: %v", path, err)
	}
	return n
}

func buildServer(t *testing.T) string {
	t.Helper()
	bin, err := controlplane.ProjectBinary(t.Context(), "apply-hygiene", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// server is a running apply-hygiene process.
type server struct {
	cmd                    *exec.Cmd
	webhookURL, metricsURL string
}

// startServer runs bin with GOMEMLIMIT=goMemLimit against a stub API server
// that knows every namespace (all an edit's review reads), and waits until
// it is ready. The test stops it.
func startServer(t *testing.T, bin string, goMemLimit int64, args ...string) *server {
	t.Helper()
	api := stubAPIServer(t)
	dir := t.TempDir()
	writeServingCert(t, api, dir)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	writeFile(t, kubeconfig, fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: stub, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: stub, user: {token: stub}}]
contexts: [{name: stub, context: {cluster: stub, user: stub}}]
current-context: stub
`, api.URL))
	ports := freePorts(t, 3)
	cmd := exec.Command(bin, append([]string{"--kubeconfig=" + kubeconfig, "--cert-dir=" + dir, "--port=" + ports[0],
		"--metrics-bind-address=127.0.0.1:" + ports[1], "--health-probe-bind-address=127.0.0.1:" + ports[2], "--log-level=error"}, args...)...)
	cmd.Env = append(os.Environ(), "GOMEMLIMIT="+strconv.FormatInt(goMemLimit, 10))
	logFile, err := os.Create(filepath.Join(dir, "apply-hygiene.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting apply-hygiene: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if err := <-exited; err != nil {
			t.Logf("apply-hygiene stopped: %v", err)
		}
		_ = logFile.Close()
	})
	s := &server{cmd: cmd, webhookURL: "https://127.0.0.1:" + ports[0], metricsURL: "http://127.0.0.1:" + ports[1] + "/metrics"}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(logFile.Name())
			t.Fatalf("apply-hygiene exited during start-up: %v\n%s", err, log)
		default:
		}
		if resp, err := http.Get("http://127.0.0.1:" + ports[2] + "/readyz"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
	}
	t.Fatal("apply-hygiene not ready after 60 s")
	return nil
}

// stubAPIServer answers GET of any namespace, unlabelled; nothing else.
func stubAPIServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutPrefix(r.URL.Path, "/api/v1/namespaces/")
		if r.Method != http.MethodGet || !ok || strings.Contains(name, "/") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}})
	}))
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// writeServingCert writes the stub API server's certificate (for
// 127.0.0.1) as the webhook's tls.crt and tls.key in dir.
func writeServingCert(t *testing.T, srv *httptest.Server, dir string) {
	t.Helper()
	cert := srv.TLS.Certificates[0]
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}))
	writeFile(t, filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}))
}

func writeFile[T string | []byte](t *testing.T, path string, content T) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var ports []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = l.Close() }()
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return ports
}

// peakRSS is the peak resident set size of process pid (VmHWM).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the server's peak RSS (Linux only): %v", err)
	}
	for line := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("reading VmHWM %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/<pid>/status")
	return 0
}

// overloadMetric sums apply_hygiene_review_errors_total{reason="overload"}.
func (s *server) overloadMetric(t *testing.T) int {
	t.Helper()
	resp, err := http.Get(s.metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	sum := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "apply_hygiene_review_errors_total{") && strings.Contains(line, `reason="overload"`) {
			n, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("reading %q: %v", line, err)
			}
			sum += int(n)
		}
	}
	return sum
}

// loadResult counts the answers by kind.
type loadResult struct {
	reviewed, overloads, timeouts, otherErrors, failed int
	metricOverloads                                    int
	firstFailure                                       string
}

func (r loadResult) String() string {
	return fmt.Sprintf("%d reviewed, %d answered overload (metric %d), %d answered timeout, %d other errors, %d calls failed",
		r.reviewed, r.overloads, r.metricOverloads, r.timeouts, r.otherErrors, r.failed)
}

// sendLoad has clients clients send body for loadTime, each alternating
// /validate and /mutate, and waits for every answer.
func sendLoad(t *testing.T, base string, body []byte) loadResult {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a test's own loopback server
		MaxIdleConnsPerHost: clients,
	}}
	var (
		mu  sync.Mutex
		res loadResult
		wg  sync.WaitGroup
	)
	stop := time.Now().Add(loadTime)
	for i := range clients {
		wg.Go(func() {
			for n := i; time.Now().Before(stop); n++ {
				path := []string{"/validate", "/mutate"}[n%2]
				kind, detail := call(client, base+path+"?timeout="+apiServerTimeout, body)
				mu.Lock()
				res.count(kind, detail)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return res
}

func (r *loadResult) count(kind, detail string) {
	switch kind {
	case "reviewed":
		r.reviewed++
	case "overload":
		r.overloads++
	case "timeout":
		r.timeouts++
	case "error":
		r.otherErrors++
	default:
		r.failed++
		if r.firstFailure == "" {
			r.firstFailure = detail
		}
	}
}

// call sends one review and says what the answer was: reviewed, overload,
// timeout, error (another failure-policy answer) or failed.
func call(client *http.Client, url string, body []byte) (kind, detail string) {
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return "failed", err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	var review struct {
		Response *struct {
			Allowed  bool
			Warnings []string
			Status   *struct{ Message string }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&review); err != nil || resp.StatusCode != http.StatusOK || review.Response == nil {
		return "failed", fmt.Sprintf("HTTP %d, %v", resp.StatusCode, err)
	}
	text := strings.Join(review.Response.Warnings, "\n")
	if review.Response.Status != nil {
		text += review.Response.Status.Message
	}
	switch {
	case strings.Contains(text, "over its memory budget"):
		return "overload", text
	case strings.Contains(text, "did not finish within"):
		return "timeout", text
	case strings.Contains(text, "could not review"):
		return "error", text
	}
	return "reviewed", ""
}
