package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// Namespaces of the API-server measure: the webhook reviews writes in the
// first and ignores the second (the chart's apply-hygiene.io/ignore).
const (
	reviewedNamespace = "load-reviewed"
	ignoredNamespace  = "load-ignored"
)

// localCluster is a control plane and apply-hygiene, both local processes.
type localCluster struct {
	cp     *controlplane.ControlPlane
	hook   *devenv.Webhook
	client kubernetes.Interface
	binDir string
}

// startCluster starts the control plane and the server (binary, or built
// from the tree when empty); stop ends both.
func startCluster(ctx context.Context, progress func(string), binary string, serverArgs ...string) (*localCluster, error) {
	binDir, err := controlplane.FindBinDir()
	if err != nil {
		return nil, err
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{BinDir: binDir, Progress: progress})
	if err != nil {
		return nil, err
	}
	c := &localCluster{cp: cp, binDir: binDir}
	progress("building and starting apply-hygiene")
	if c.hook, err = devenv.Start(ctx, cp, devenv.Options{BinDir: binDir, Binary: binary, ServerArgs: serverArgs}); err != nil {
		return nil, errors.Join(err, c.stop())
	}
	config, err := cp.RESTConfig()
	if err == nil {
		config.QPS, config.Burst = 1000, 1000
		c.client, err = kubernetes.NewForConfig(config)
	}
	if err != nil {
		return nil, errors.Join(err, c.stop())
	}
	return c, nil
}

func (c *localCluster) stop() error {
	var err error
	if c.hook != nil {
		err = c.hook.Close()
	}
	return errors.Join(err, c.cp.Stop())
}

func (c *localCluster) url(path string) string {
	return "https://127.0.0.1:" + strconv.Itoa(c.hook.Port) + path
}

// createNamespace creates a namespace unless it exists.
func (c *localCluster) createNamespace(ctx context.Context, name string, labels map[string]string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := c.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// residentMemory reads process_resident_memory_bytes from the server's
// metrics.
func (c *localCluster) residentMemory(ctx context.Context) (memory, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.hook.MetricsURL, nil)
	if err != nil {
		return memory{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return memory{}, fmt.Errorf("reading metrics: %w", err)
	}
	defer resp.Body.Close()
	var m memory
	fields := map[string]*float64{
		"process_resident_memory_bytes": &m.rss,
		"go_memstats_heap_inuse_bytes":  &m.heapInuse,
		"go_memstats_next_gc_bytes":     &m.nextGC,
	}
	scanner := bufio.NewScanner(resp.Body)
	for scanner.Scan() {
		name, v, ok := strings.Cut(scanner.Text(), " ")
		if p, want := fields[name]; ok && want {
			if *p, err = strconv.ParseFloat(v, 64); err != nil {
				return memory{}, fmt.Errorf("reading metrics: %s: %w", name, err)
			}
		}
	}
	if m.rss == 0 {
		return memory{}, errors.New("reading metrics: no process_resident_memory_bytes")
	}
	return m, scanner.Err()
}

// memory is what the server's metrics say of its memory, in bytes.
type memory struct{ rss, heapInuse, nextGC float64 }

func (m memory) String() string {
	return fmt.Sprintf("%.1f MiB (heap in use %.1f MiB, next GC at %.1f MiB)", m.rss/(1<<20), m.heapInuse/(1<<20), m.nextGC/(1<<20))
}

// manifest is the Deployment that the API-server measure updates; value
// changes with every apply.
func manifest(namespace string, value int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: %s
  labels: {app: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        env: [{name: ROUND, value: "%d"}, {name: LOG_LEVEL, value: info}]
        ports: [{name: http, containerPort: 80}]
        resources: {requests: {cpu: 100m, memory: 128Mi}}
      - name: sidecar
        image: busybox:1.36
        args: [sleep, infinity]
`, namespace, value)
}

// kubectlApply runs kubectl apply of the manifest in namespace.
func (c *localCluster) kubectlApply(ctx context.Context, namespace string, value int) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, "kubectl"), "apply", "-f", "-")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.cp.KubeconfigPath())
	cmd.Stdin = strings.NewReader(manifest(namespace, value))
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("kubectl apply in %s: %w: %s", namespace, err, out)
	}
	return took, nil
}

// update sets an annotation with client-go under field manager; it
// returns the duration of the Update call that succeeded.
func (c *localCluster) update(ctx context.Context, namespace string, value int, manager string) (time.Duration, error) {
	var took time.Duration
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := c.client.AppsV1().Deployments(namespace).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Annotations == nil {
			d.Annotations = map[string]string{}
		}
		d.Annotations["load.apply-hygiene.io/round"] = strconv.Itoa(value)
		start := time.Now()
		_, err = c.client.AppsV1().Deployments(namespace).Update(ctx, d, metav1.UpdateOptions{FieldManager: manager})
		took = time.Since(start)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("updating %s/web: %w", namespace, err)
	}
	return took, nil
}

// compare runs f rounds times in both namespaces, alternating which goes
// first, and returns the durations in each.
func compare(ctx context.Context, rounds int, f func(ctx context.Context, namespace string, round int) (time.Duration, error)) (reviewed, ignored latencies, err error) {
	start := time.Now()
	for i := range rounds {
		order := []string{reviewedNamespace, ignoredNamespace}
		if i%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		for _, ns := range order {
			d, err := f(ctx, ns, i)
			if err != nil {
				return reviewed, ignored, err
			}
			if ns == reviewedNamespace {
				reviewed.took = append(reviewed.took, d)
			} else {
				ignored.took = append(ignored.took, d)
			}
		}
	}
	reviewed.wall, ignored.wall = time.Since(start), time.Since(start)
	slices.Sort(reviewed.took)
	slices.Sort(ignored.took)
	return reviewed, ignored, nil
}
