package node_test

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/apply-hygiene/apply-hygiene/hack/node"
)

// pdbBlocked is kubectl drain's line for the eviction the
// PodDisruptionBudget refused.
const pdbBlocked = `Cannot evict pod as it would violate the pod's disruption budget.`

var evicted = regexp.MustCompile(`(?m)^pod/(\S+) evicted$`)

// drain drains the node as an operator does before maintenance. With one
// node the PodDisruptionBudget (minAvailable 1) lets one replica go and
// holds the other: drain evicts one, retries the other until its timeout
// and fails. While the node is cordoned and one replica serves alone, the
// self-managed certificate rotates; after kubectl uncordon the new
// replica serves the Secret's current certificate.
func (h *haRun) drain(ctx context.Context) (d disruption, err error) {
	d = disruption{what: "kubectl drain of the node (PodDisruptionBudget minAvailable 1)", start: time.Now()}
	defer func() {
		if res := h.admin.Run(h.t, "uncordon", node.Name); res.ExitCode != 0 && err == nil {
			err = fmt.Errorf("kubectl uncordon exited %d: %s", res.ExitCode, res.Stderr)
		}
	}()
	res := h.admin.Run(h.t, "drain", node.Name, "--pod-selector="+serverSelector, "--delete-emptydir-data", "--timeout=15s")
	out := res.Stdout + res.Stderr
	gone := evicted.FindAllStringSubmatch(out, -1)
	switch {
	case res.ExitCode == 0:
		return d, fmt.Errorf("kubectl drain succeeded, want it held by the PodDisruptionBudget:\n%s", out)
	case !strings.Contains(out, pdbBlocked):
		return d, fmt.Errorf("kubectl drain did not say %q:\n%s", pdbBlocked, out)
	case len(gone) != 1:
		return d, fmt.Errorf("kubectl drain evicted %d server Pods, want 1:\n%s", len(gone), out)
	}
	pdb, err := h.client.PolicyV1().PodDisruptionBudgets(namespace).Get(ctx, release, metav1.GetOptions{})
	if err != nil {
		return d, err
	}
	if pdb.Status.CurrentHealthy != 1 || pdb.Status.DisruptionsAllowed != 0 {
		return d, fmt.Errorf("PodDisruptionBudget after the drain: %d healthy, %d disruptions allowed; want 1 and 0",
			pdb.Status.CurrentHealthy, pdb.Status.DisruptionsAllowed)
	}
	// The audit runs on the replica that stayed: it led already, or took
	// the Lease that the evicted one released.
	staying, err := h.serverPods(ctx)
	if err != nil {
		return d, err
	}
	staying = slices.DeleteFunc(staying, func(p corev1.Pod) bool { return !podReady(p) })
	if len(staying) != 1 {
		return d, fmt.Errorf("%d ready replicas after the drain, want 1: %v", len(staying), podNames(staying))
	}
	if _, err := h.waitLeader(ctx, 30*time.Second, func(holder string) bool { return holder == staying[0].Name }); err != nil {
		return d, fmt.Errorf("the audit is not on the replica that stayed, %s: %w", staying[0].Name, err)
	}
	// The evicted Pod is gone (its shutdown delay is shorter than the
	// drain's timeout): the next rotation comes with one replica.
	now, err := h.client.CoreV1().Secrets(namespace).Get(ctx, "apply-hygiene-tls", metav1.GetOptions{})
	if err != nil {
		return d, err
	}
	downSince := time.Now()
	if err := waitRotation(ctx, h.client, now.Data["tls.crt"], time.Minute); err != nil {
		return d, fmt.Errorf("no rotation while %s was evicted: %w", gone[0][1], err)
	}
	d.note = fmt.Sprintf("evicted %s; drain held by the PodDisruptionBudget and failed after its 15s timeout; the audit Lease on %s, "+
		"the one that stayed; the certificate rotated %s later with one replica serving; then kubectl uncordon",
		gone[0][1], staying[0].Name, time.Since(downSince).Round(100*time.Millisecond))
	return d, nil
}

// waitRotation waits until the Secret's tls.crt is other than crt.
func waitRotation(ctx context.Context, client kubernetes.Interface, crt []byte, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		s, err := client.CoreV1().Secrets(namespace).Get(ctx, "apply-hygiene-tls", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return !bytes.Equal(s.Data["tls.crt"], crt), nil
	})
}

// servingTheSecret waits until every server Pod serves the Secret's
// certificate (read from the node, at the Pod's IP).
func (h *haRun) servingTheSecret(ctx context.Context) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		s, err := h.client.CoreV1().Secrets(namespace).Get(ctx, "apply-hygiene-tls", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pods, err := h.serverPods(ctx)
		if err != nil {
			return false, err
		}
		for _, p := range pods {
			leaf, err := servedLeaf(p.Status.PodIP + ":9443")
			if err != nil || !bytes.Equal(leaf, secretLeaf(s)) {
				last = fmt.Sprintf("%s serves another certificate (%v)", p.Name, err)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", last, err)
	}
	return nil
}

// rotations records each change of the Secret's tls.crt until stop.
type rotations struct {
	mu sync.Mutex
	at []time.Time
}

func (r *rotations) watch(ctx context.Context, client kubernetes.Interface, stop <-chan struct{}) {
	var last []byte
	for {
		if s, err := client.CoreV1().Secrets(namespace).Get(ctx, "apply-hygiene-tls", metav1.GetOptions{}); err == nil {
			if last != nil && !bytes.Equal(s.Data["tls.crt"], last) {
				r.mu.Lock()
				r.at = append(r.at, time.Now())
				r.mu.Unlock()
			}
			last = s.Data["tls.crt"]
		}
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (r *rotations) times() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.at
}

// warningEvents are the Warning events in the release's namespace as
// "Kind/name reason: message".
func warningEvents(ctx context.Context, client kubernetes.Interface) ([]corev1.Event, error) {
	list, err := client.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "type=" + corev1.EventTypeWarning})
	if err != nil {
		return nil, fmt.Errorf("listing the Warning events: %w", err)
	}
	return list.Items, nil
}

func eventLine(e corev1.Event) string {
	return fmt.Sprintf("%s/%s %s: %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
}
