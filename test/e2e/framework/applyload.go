package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// lastAppliedAnnotation is kubectl's annotation.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// WebhookFailure matches the end of kubectl's error when the API server
// could not call apply-hygiene (failurePolicy Fail): down, restarting, or
// cut off mid-request; at a URL (the local process, 127.0.0.1) or through
// the chart's Service (https://<release>.<namespace>.svc:443). Group 3 is
// the cause.
var WebhookFailure = regexp.MustCompile(`Internal error occurred: failed calling webhook "(mutate|validate)\.apply-hygiene\.io": ` +
	`failed to call webhook: Post "https://[^/"]+/(mutate|validate)\?timeout=\d+s": (.*)$`)

// cutOffInFlight matches the causes the API server's HTTP client gives
// for a call the server's end cut off mid-request (a SIGKILL, an OOM
// kill, a lost node): the connection's read or write failed, or the
// client had closed the connection (its read loop saw it die) while the
// request was still being written.
var cutOffInFlight = regexp.MustCompile(`^(unexpected EOF|EOF|http2: client connection lost|http2: client connection force closed via ClientConn\.Close|` +
	`read tcp [0-9.:]+->[0-9.:]+: read: connection reset by peer|write tcp [0-9.:]+->[0-9.:]+: write: (broken pipe|connection reset by peer)|` +
	`use of closed network connection)$`)

// WebhookCallCause returns the cause kubectl printed, at the end of
// stderr, for a write the API server could not call apply-hygiene for
// (WebhookFailure), and whether there was one.
func WebhookCallCause(stderr string) (string, bool) {
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	m := WebhookFailure.FindStringSubmatch(lines[len(lines)-1])
	if m == nil {
		return "", false
	}
	return m[3], true
}

// CutOffInFlight reports whether cause (WebhookCallCause) says the call
// was cut off mid-request by the server's end.
func CutOffInFlight(cause string) bool {
	return cutOffInFlight.MatchString(cause)
}

// LoadDeployment is the manifest of a load client's Deployment at
// generation gen: each generation has a new image.
func LoadDeployment(name string, gen int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
spec:
  replicas: 0
  revisionHistoryLimit: 2
  selector:
    matchLabels:
      app: %[1]s
  template:
    metadata:
      labels:
        app: %[1]s
    spec:
      containers:
      - name: app
        image: registry.example/app:%[2]d
`, name, gen)
}

// ClientLoad is what one load client saw.
type ClientLoad struct {
	// Name is the client's Deployment.
	Name string
	// LastOK is the manifest of its last successful apply.
	LastOK string
	// Applies is how many applies it made, failed or not.
	Applies int
	// Failures are its failed applies.
	Failures []FailedApply
	// StderrOK is what successful applies printed on stderr.
	StderrOK []string
	// Latencies are how long its successful applies took, kubectl's
	// process from start to exit, as a user waits for it.
	Latencies []time.Duration
}

// FailedApply is one apply that exited non-zero: its stderr and when it
// ran.
type FailedApply struct {
	Stderr     string
	Start, End time.Time
}

// LoadApplies is how many applies the load tests make in all: 1,000, or
// APPLY_HYGIENE_HA_APPLIES (make test sets 400; the long runs of
// docs/reliability.md more), rounded down to a multiple of clients.
func LoadApplies(t *testing.T, clients int) int {
	t.Helper()
	n := 1000
	if v := os.Getenv("APPLY_HYGIENE_HA_APPLIES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < clients {
			t.Fatalf("APPLY_HYGIENE_HA_APPLIES=%q: want a number of at least %d", v, clients)
		}
	}
	return n - n%clients
}

// ApplyLoad has clients apply their own Deployment (LoadDeployment,
// client-N) perClient times each, a new image every time, with one
// kubectl process per apply, while during runs; during must return once
// done is closed. Each client first creates its Deployment at generation 0.
func (f *Framework) ApplyLoad(t *testing.T, clients, perClient int, during func(ctx context.Context, done <-chan struct{}) error) []ClientLoad {
	t.Helper()
	return f.applyLoad(t, clients, perClient, false, during)
}

// ApplyLoadUntil is ApplyLoad whose clients go on past perClient applies
// until during has returned: for a disruption that takes its own time
// (a certificate rotation), which a fast machine's applies must not
// outrun. during is not told when the applies end; ctx bounds it.
func (f *Framework) ApplyLoadUntil(t *testing.T, clients, perClient int, during func(ctx context.Context) error) []ClientLoad {
	t.Helper()
	return f.applyLoad(t, clients, perClient, true, func(ctx context.Context, _ <-chan struct{}) error { return during(ctx) })
}

func (f *Framework) applyLoad(t *testing.T, clients, perClient int, untilDuring bool, during func(ctx context.Context, done <-chan struct{}) error) []ClientLoad {
	t.Helper()
	ctx := t.Context()
	for c := range clients {
		f.Kubectl.RunWithInput(t, LoadDeployment(LoadClientName(c), 0), "apply", "-f", "-").MustSucceed(t)
	}
	done, returned := make(chan struct{}), make(chan struct{})
	duringErr := make(chan error, 1)
	go func() {
		duringErr <- during(ctx, done)
		close(returned)
	}()
	more := func(gen int) bool {
		if gen <= perClient {
			return true
		}
		if !untilDuring {
			return false
		}
		select {
		case <-returned:
			return false
		default:
			return ctx.Err() == nil
		}
	}
	loads := make([]ClientLoad, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			home := t.TempDir()
			l := &loads[c]
			l.Name, l.LastOK = LoadClientName(c), LoadDeployment(LoadClientName(c), 0)
			for gen := 1; more(gen); gen++ {
				manifest := LoadDeployment(l.Name, gen)
				began := time.Now()
				stderr, err := f.Kubectl.quietApply(ctx, home, manifest)
				l.Applies++
				switch {
				case err != nil:
					l.Failures = append(l.Failures, FailedApply{Stderr: stderr, Start: began, End: time.Now()})
				case stderr != "":
					l.LastOK, l.StderrOK = manifest, append(l.StderrOK, stderr)
					l.Latencies = append(l.Latencies, time.Since(began))
				default:
					l.LastOK = manifest
					l.Latencies = append(l.Latencies, time.Since(began))
				}
			}
		})
	}
	wg.Wait()
	close(done)
	if err := <-duringErr; err != nil {
		t.Fatalf("during the applies: %v", err)
	}
	t.Logf("%d applies by %d clients in %s", TotalApplies(loads), clients, time.Since(start).Round(time.Second))
	return loads
}

// TotalApplies is the number of applies the clients made, failed or not.
func TotalApplies(loads []ClientLoad) int {
	n := 0
	for _, l := range loads {
		n += l.Applies
	}
	return n
}

// Latency is the p50, p99 and maximum of the successful applies'
// latencies (ClientLoad.Latencies) of all clients.
type Latency struct {
	P50, P99, Max time.Duration
}

// String prints the latency as docs/reliability.md does.
func (l Latency) String() string {
	return fmt.Sprintf("p50 %s, p99 %s, max %s", l.P50.Round(time.Millisecond), l.P99.Round(time.Millisecond), l.Max.Round(time.Millisecond))
}

// Latencies returns the percentiles of the successful applies' latencies
// (nearest rank), zero without any.
func Latencies(loads []ClientLoad) Latency {
	var all []time.Duration
	for _, l := range loads {
		all = append(all, l.Latencies...)
	}
	if len(all) == 0 {
		return Latency{}
	}
	slices.Sort(all)
	rank := func(p int) time.Duration { return all[(len(all)*p+99)/100-1] }
	return Latency{P50: rank(50), P99: rank(99), Max: all[len(all)-1]}
}

// LoadClientName is the Deployment of load client c.
func LoadClientName(c int) string { return fmt.Sprintf("client-%d", c) }

// quietApply runs kubectl apply -f - with manifest, without the
// framework's per-run log: a load makes thousands.
func (k Kubectl) quietApply(ctx context.Context, home, manifest string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.Path, "apply", "-f", "-", "--namespace="+k.Namespace)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+k.Kubeconfig, "HOME="+home, clientGC)
	cmd.Stdin = strings.NewReader(manifest)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	return stderr.String(), err
}

// appliedDeployment is what CheckApplied compares of a Deployment: its
// image, and its last-applied, decoded.
type appliedDeployment struct {
	Image       string
	LastApplied map[string]any
}

// CheckApplied fails t unless Deployment name in the test's namespace is
// as kubectl apply of manifest leaves it: its image, and the manifest as
// last-applied (kubectl adds the namespace, and an empty annotations map,
// the annotation's own place).
func (f *Framework) CheckApplied(t *testing.T, name, manifest string) {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(manifest), &m); err != nil {
		t.Fatal(err)
	}
	meta := m["metadata"].(map[string]any)
	meta["namespace"], meta["annotations"] = f.Namespace, map[string]any{}
	containers := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
	want := appliedDeployment{Image: containers[0].(map[string]any)["image"].(string), LastApplied: m}

	d, err := f.Client.AppsV1().Deployments(f.Namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading deployment %s: %v", name, err)
	}
	got := appliedDeployment{Image: d.Spec.Template.Spec.Containers[0].Image}
	if err := json.Unmarshal([]byte(d.Annotations[lastAppliedAnnotation]), &got.LastApplied); err != nil {
		t.Fatalf("deployment %s: last-applied %q is not JSON: %v", name, d.Annotations[lastAppliedAnnotation], err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deployment %s is not as its last apply asked (-want +got):\n%s", name, diff)
	}
}
