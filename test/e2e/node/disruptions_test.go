package node_test

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/apply-hygiene/apply-hygiene/hack/node"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// serverSelector selects the server's Pods (not the helm test Pod).
const serverSelector = "app.kubernetes.io/name=apply-hygiene,app.kubernetes.io/instance=" + release + ",app.kubernetes.io/component!=test"

// disruption is one disruption of a run: what, when it began, when both
// replicas were ready again, and what it showed.
type disruption struct {
	what       string
	start, end time.Time
	// kill: a container was killed, so a review in flight on it was cut
	// off (the one kind of failed write a run allows).
	kill bool
	note string
}

// haRun disrupts the release's replicas one way after the other while
// the applies run, from a goroutine other than the test's.
type haRun struct {
	t          *testing.T
	client     kubernetes.Interface
	admin      framework.Kubectl
	kubeconfig string
	node       *node.Node

	mu   sync.Mutex
	done []disruption
}

func (h *haRun) record(d disruption) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.done = append(h.done, d)
	h.t.Logf("disruption %q from %s to %s: %s", d.what, d.start.Format("15:04:05.000"), d.end.Format("15:04:05.000"), d.note)
}

func (h *haRun) disruptions() []disruption {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.done)
}

// all runs the disruptions in turn, each once both replicas are ready.
func (h *haRun) all(ctx context.Context) error {
	for _, step := range []func(context.Context) (disruption, error){h.deleteAuditLeader, h.killContainer, h.helmUpgrade, h.drain} {
		if err := h.waitReady(ctx); err != nil {
			return err
		}
		d, err := step(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", d.what, err)
		}
		if err := h.waitReady(ctx); err != nil {
			return fmt.Errorf("%s: %w", d.what, err)
		}
		d.end = time.Now()
		h.record(d)
	}
	return nil
}

// deleteAuditLeader deletes the Pod that leads the audit (kubectl delete
// pod, graceful): it leads through its shutdown delay, then releases the
// Lease on its way out, and a running replica takes it: the one that
// survived or the Deployment's replacement, whichever tries first.
func (h *haRun) deleteAuditLeader(ctx context.Context) (disruption, error) {
	d := disruption{what: "kubectl delete pod of the audit leader"}
	leader, err := h.auditLeader(ctx)
	if err != nil {
		return d, err
	}
	before, err := h.serverPods(ctx)
	if err != nil {
		return d, err
	}
	d.start = time.Now()
	if res := h.admin.Run(h.t, "delete", "pod", leader, "--wait=false"); res.ExitCode != 0 {
		return d, fmt.Errorf("kubectl delete pod exited %d: %s", res.ExitCode, res.Stderr)
	}
	holder, err := h.waitLeader(ctx, time.Minute, func(holder string) bool { return holder != leader })
	if err != nil {
		return d, err
	}
	took := time.Since(d.start).Round(100 * time.Millisecond)
	pods, err := h.serverPods(ctx)
	if err != nil {
		return d, err
	}
	if !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Name == holder }) {
		return d, fmt.Errorf("the audit Lease went to %s, not a running replica of %v", holder, podNames(pods))
	}
	which := "its replacement"
	if slices.ContainsFunc(before, func(p corev1.Pod) bool { return p.Name == holder }) {
		which = "the surviving replica"
	}
	d.note = fmt.Sprintf("the audit Lease moved from %s to %s %s, %s after the delete", leader, which, holder, took)
	return d, nil
}

// waitLeader waits until the audit Lease's holder is one that ok accepts,
// and returns it.
func (h *haRun) waitLeader(ctx context.Context, timeout time.Duration, ok func(holder string) bool) (string, error) {
	var holder string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		holder, err = h.auditLeader(ctx)
		return err == nil && ok(holder), nil
	})
	if err != nil {
		return holder, fmt.Errorf("the audit Lease still names %q after %s: %w", holder, timeout, err)
	}
	return holder, nil
}

// killContainer kills one server container's process with SIGKILL from
// the host, as an OOM kill would; the kubelet restarts it.
func (h *haRun) killContainer(ctx context.Context) (disruption, error) {
	d := disruption{what: "server container killed (SIGKILL)", kill: true}
	pods, err := h.serverPods(ctx)
	if err != nil {
		return d, err
	}
	victim := pods[0]
	status := victim.Status.ContainerStatuses[0]
	pid, err := h.node.ContainerPID(ctx, status.ContainerID)
	if err != nil {
		return d, err
	}
	d.start = time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return d, fmt.Errorf("killing pid %d of %s: %w", pid, victim.Name, err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := h.client.CoreV1().Pods(namespace).Get(ctx, victim.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		s := p.Status.ContainerStatuses[0]
		return s.RestartCount > status.RestartCount && s.Ready, nil
	})
	if err != nil {
		return d, fmt.Errorf("%s not restarted and ready within a minute: %w", victim.Name, err)
	}
	d.note = fmt.Sprintf("the kubelet restarted %s's container, ready %s after the kill", victim.Name, time.Since(d.start).Round(100*time.Millisecond))
	return d, nil
}

// helmUpgrade rolls the Deployment with helm upgrade, as a new pod
// annotation (any change of the template) does.
func (h *haRun) helmUpgrade(ctx context.Context) (disruption, error) {
	d := disruption{what: "helm upgrade (rolling)", start: time.Now()}
	chart, err := chartDir()
	if err != nil {
		return d, err
	}
	out, code, err := runHelm(ctx, h.kubeconfig, "upgrade", release, chart, "--namespace", namespace, "--reuse-values",
		"--set-string", "podAnnotations.rolled="+d.start.Format(time.RFC3339Nano), "--wait", "--timeout=2m")
	if err != nil {
		return d, err
	}
	if code != 0 {
		return d, fmt.Errorf("helm upgrade exited %d:\n%s", code, out)
	}
	d.note = fmt.Sprintf("helm upgrade --wait returned after %s", time.Since(d.start).Round(100*time.Millisecond))
	return d, nil
}

// auditLeader is the Pod that holds the audit's Lease (controller-runtime
// names it <pod>_<uuid>).
func (h *haRun) auditLeader(ctx context.Context) (string, error) {
	lease, err := h.client.CoordinationV1().Leases(namespace).Get(ctx, "apply-hygiene-audit", metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading the audit Lease: %w", err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		return "", errors.New("the audit Lease has no holder")
	}
	pod, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_")
	return pod, nil
}

// serverPods are the server's Pods that are not terminating, by name.
func (h *haRun) serverPods(ctx context.Context) ([]corev1.Pod, error) {
	list, err := h.client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: serverSelector})
	if err != nil {
		return nil, fmt.Errorf("listing the server's Pods: %w", err)
	}
	var pods []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			pods = append(pods, p)
		}
	}
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return pods, nil
}

// waitReady waits until the server runs as exactly two Pods, both ready,
// and no other (terminating) one.
func (h *haRun) waitReady(ctx context.Context) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := h.client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: serverSelector})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil && podReady(p) {
				ready++
			}
		}
		last = fmt.Sprintf("%d Pods, %d ready", len(list.Items), ready)
		return len(list.Items) == 2 && ready == 2, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for 2 ready replicas (%s): %w", last, err)
	}
	return nil
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podNames(pods []corev1.Pod) []string {
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
	}
	return names
}

// servedLeaf is the DER certificate that the server at addr serves.
func servedLeaf(addr string) ([]byte, error) {
	dialer := &net.Dialer{Timeout: 2 * time.Second}
	// Only the certificate is read; the API server verifies it against
	// the caBundle.
	conn, err := tls.DialWithDialer(dialer, "tcp", addr, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) //nolint:gosec // reads the certificate only
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	return conn.ConnectionState().PeerCertificates[0].Raw, nil
}

// secretLeaf is the DER certificate of the Secret's tls.crt.
func secretLeaf(s *corev1.Secret) []byte {
	block, _ := pem.Decode(s.Data["tls.crt"])
	if block == nil {
		return nil
	}
	return block.Bytes
}
