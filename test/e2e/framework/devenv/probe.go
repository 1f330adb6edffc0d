package devenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// probeNamespace holds a Deployment that dry-run updates probe the webhook
// with; it is not excluded by the chart's namespaceSelector.
const probeNamespace = "apply-hygiene-probe"

var validateCalls = regexp.MustCompile(`controller_runtime_webhook_requests_total\{code="200",webhook="/validate"\} (\d+)`)

// waitCalled returns once the API server has called the validating
// webhook: dry-run updates of the probe Deployment until the server's
// request counter moves. They name a field manager: the chart's
// may-have-a-decision condition keeps away a write with none to an object
// without last-applied.
func (w *Webhook) waitCalled(ctx context.Context, client kubernetes.Interface) error {
	if err := ensureProbe(ctx, client); err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		patch := fmt.Sprintf(`{"metadata":{"labels":{"probe":"p%d"}}}`, i)
		_, err := client.AppsV1().Deployments(probeNamespace).Patch(ctx, "probe", types.MergePatchType, []byte(patch),
			metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: "apply-hygiene-probe"})
		if err != nil {
			return fmt.Errorf("probing the webhook: %w", err)
		}
		if n, err := w.validateCalls(ctx); err == nil && n > 0 {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("the API server did not call the webhook within 60s")
}

// validateCalls sums the calls over the running replicas.
func (w *Webhook) validateCalls(ctx context.Context) (int, error) {
	sum := 0
	for _, r := range w.replicas {
		if !r.Running() {
			continue
		}
		n, err := validateCallsAt(ctx, r)
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}

func validateCallsAt(ctx context.Context, r *Replica) (int, error) {
	body, err := r.Metrics(ctx)
	if err != nil {
		return 0, err
	}
	m := validateCalls.FindStringSubmatch(body)
	if m == nil {
		return 0, nil
	}
	return strconv.Atoi(m[1])
}

// Metrics returns the replica's /metrics page.
func (r *Replica) Metrics(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.MetricsURL, nil)
	if err != nil {
		return "", fmt.Errorf("creating metrics request: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("reading metrics of replica %d: %w", r.Index, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("reading metrics of replica %d: %w", r.Index, err)
	}
	return string(body), nil
}

func ensureProbe(ctx context.Context, client kubernetes.Interface) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: probeNamespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the probe namespace: %w", err)
	}
	labels := map[string]string{"app": "probe"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "probe"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "probe"}}},
			},
		},
	}
	if _, err := client.AppsV1().Deployments(probeNamespace).Create(ctx, d, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the probe Deployment: %w", err)
	}
	return nil
}

// ValidateCalls is the number of successful calls of the validating
// webhook so far, from the running replicas' metrics; 0 when they cannot
// be read.
func (w *Webhook) ValidateCalls(ctx context.Context) int {
	n, err := w.validateCalls(ctx)
	if err != nil {
		return 0
	}
	return n
}
