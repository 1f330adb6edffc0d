package node_test

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// This file's test runs after the others but helm test and helm
// uninstall (files in name order), which then run on its release.

// haClients apply at the same time.
const haClients = 8

// The chart's 2 replicas and PodDisruptionBudget on the real node, under
// failurePolicy Fail, the audit on and a 60 s self-managed certificate
// (testdata/ha-values.yaml), while 8 kubectl clients apply their own
// Deployment, a new image each time, 1,000 applies at least and until
// these are done, one after the other: the audit leader's Pod deleted
// (another running replica takes its Lease), a container killed with
// SIGKILL (the kubelet restarts it), helm upgrade rolling the Deployment,
// and kubectl drain of the node (the PodDisruptionBudget holds the second
// replica, which runs the audit; the certificate rotates while it serves
// alone; then kubectl uncordon). What a user sees: every apply succeeds,
// except those whose review the killed container had in flight, or that
// the API server sent to its Pod's address before the endpoint was taken
// out (it does not retry a webhook call): each fails naming the call,
// within the kill's window, and changes nothing; no call failed open; the
// API server counted no webhook error but those; every Deployment is as
// its last successful apply asked; both Pods serve the Secret's
// certificate, whose CA is in the caBundle; the Pods running at the end,
// started during the run, have no readiness or liveness probe Warning.
func TestAppliesUnderDisruption(t *testing.T) {
	admin := installed(t)
	installForHA(t, admin)
	f := framework.New(t)
	h := &haRun{t: t, client: f.Client, admin: admin, kubeconfig: framework.ControlPlane(t).KubeconfigPath(), node: framework.Node(t)}
	n := framework.LoadApplies(t, haClients)
	callsBefore := f.WebhookCalls(t)
	var rot rotations
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		rot.watch(t.Context(), f.Client, stop)
	}()
	start := time.Now()
	loads := f.ApplyLoadUntil(t, haClients, n/haClients, h.all)
	took := time.Since(start)
	close(stop)
	<-watched
	calls := f.WebhookCalls(t).Sub(callsBefore)

	cutOff := checkApplies(t, f, loads, h.disruptions())
	if calls.FailedOpen != 0 {
		t.Errorf("the API server counted %d webhook calls that failed open, want 0 (failurePolicy Fail)", calls.FailedOpen)
	}
	// Every error is a call the kill cut off in flight: the clients'
	// applies, and at most one write per client Deployment by
	// kube-controller-manager's deployment controller (its revision
	// annotation, an UPDATE the webhooks review), which it retries.
	if calls.Errors < cutOff || calls.Errors > cutOff+haClients {
		t.Errorf("the API server counted %d webhook errors, want %d (the applies cut off in flight) to %d (and a controller write per client Deployment)", calls.Errors, cutOff, cutOff+haClients)
	}
	if err := h.servingTheSecret(t.Context()); err != nil {
		t.Error(err)
	}
	checkCABundle(t, f)
	down := rotationsDuringDrain(rot.times(), h.disruptions())
	t.Logf("%d applies by %d clients in %s (%s), %d failed: %d cut off in flight by the kill; the API server counted %d webhook errors, "+
		"%d calls failed open, %d denials; %d certificate rotations, %d with one replica evicted",
		framework.TotalApplies(loads), haClients, took.Round(time.Second), framework.Latencies(loads), failedApplies(loads), cutOff,
		calls.Errors, calls.FailedOpen, calls.Denials, len(rot.times()), down)
	if down == 0 {
		t.Errorf("no certificate rotation while a replica was evicted")
	}
	checkStartEvents(t, h)
}

// checkStartEvents fails t on a readiness or liveness probe's Warning
// event for the Pods that run at the end, all started during the run (by
// the rolling upgrade and after the drain): a start is quiet. A startup
// probe's failure is how the chart gives a slow start (a busy node, a
// slow API server) its minute: logged, not failed. The other Pods' are
// logged too: every Pod that shuts down fails its readiness probe on
// purpose (/readyz answers 500 from SIGTERM on), and the kubelet reports
// that as a Warning.
func checkStartEvents(t *testing.T, h *haRun) {
	t.Helper()
	events, err := warningEvents(t.Context(), h.client)
	if err != nil {
		t.Fatal(err)
	}
	pods, err := h.serverPods(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var others []string
	for _, e := range events {
		running := slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Name == e.InvolvedObject.Name })
		if running && (strings.HasPrefix(e.Message, "Readiness probe failed") || strings.HasPrefix(e.Message, "Liveness probe failed")) {
			t.Errorf("a Pod that started during the run: %s", eventLine(e))
			continue
		}
		others = append(others, eventLine(e))
	}
	t.Logf("the other Warning events in %s:\n%s", namespace, strings.Join(others, "\n"))
}

// checkApplies fails t on every failed apply but those cut off by a kill,
// which it counts, and on stderr printed by a successful one, and checks
// that every Deployment is as its last successful apply asked (a failed
// apply changes nothing).
func checkApplies(t *testing.T, f *framework.Framework, loads []framework.ClientLoad, ds []disruption) (cutOff int) {
	t.Helper()
	for _, l := range loads {
		for _, fa := range l.Failures {
			if cause, ok := cutOffByAKill(fa, ds); ok {
				cutOff++
				t.Logf("%s: an apply from %s to %s was cut off in flight by the kill: %s", l.Name,
					fa.Start.Format("15:04:05.000"), fa.End.Format("15:04:05.000"), cause)
				continue
			}
			t.Errorf("%s: an apply from %s to %s failed:\n%s", l.Name, fa.Start.Format("15:04:05.000"), fa.End.Format("15:04:05.000"), fa.Stderr)
		}
		for _, stderr := range l.StderrOK {
			t.Errorf("%s: a successful apply printed on stderr:\n%s", l.Name, stderr)
		}
		f.CheckApplied(t, l.Name, l.LastOK)
	}
	return cutOff
}

// installForHA replaces the package's release by one installed with
// testdata/ha-values.yaml, and a new Secret: the 60 s certificate is
// minted at the first start (a Secret's certificate is kept until it is
// due).
func installForHA(t *testing.T, admin framework.Kubectl) {
	t.Helper()
	if out, code := helm(t, "uninstall", release, "--namespace", namespace, "--wait"); code != 0 {
		t.Fatalf("helm uninstall exited %d:\n%s", code, out)
	}
	admin.Run(t, "wait", "--for=delete", "pods", "-l", serverSelector, "--timeout=90s").MustSucceed(t)
	admin.Run(t, "delete", "secret", "apply-hygiene-tls").MustSucceed(t)
	chart, err := chartDir()
	if err != nil {
		t.Fatal(err)
	}
	if out, code := helm(t, "install", release, chart, "--namespace", namespace, "--set", "test.image="+testImage,
		"-f", "testdata/ha-values.yaml"); code != 0 {
		t.Fatalf("helm install exited %d:\n%s", code, out)
	}
	if admin.Run(t, "rollout", "status", "deployment/"+release, "--timeout=100s").ExitCode != 0 {
		dumpNode(t, admin)
		t.FailNow()
	}
}

// dialRefused is the cause of a call dialed at a killed container's Pod
// IP before its endpoint was taken out (the kubelet sees the exit, then
// the EndpointSlice changes).
var dialRefused = regexp.MustCompile(`^dial tcp [0-9.]+:9443: connect: connection refused$`)

// cutOffByAKill reports whether fa failed because its webhook call went
// to a killed container (framework.CutOffInFlight, dialRefused) while the kill's window, from the kill to
// both replicas ready again, overlapped the apply; and the cause.
func cutOffByAKill(fa framework.FailedApply, ds []disruption) (string, bool) {
	cause, ok := framework.WebhookCallCause(fa.Stderr)
	killed := ok && (framework.CutOffInFlight(cause) || dialRefused.MatchString(cause))
	if !killed {
		return "", false
	}
	for _, d := range ds {
		if d.kill && !fa.End.Before(d.start) && !fa.Start.After(d.end) {
			return cause, true
		}
	}
	return "", false
}

func failedApplies(loads []framework.ClientLoad) int {
	n := 0
	for _, l := range loads {
		n += len(l.Failures)
	}
	return n
}

// rotationsDuringDrain counts the rotations from the drain to both
// replicas ready again.
func rotationsDuringDrain(at []time.Time, ds []disruption) int {
	n := 0
	for _, d := range ds {
		if !strings.HasPrefix(d.what, "kubectl drain") {
			continue
		}
		for _, r := range at {
			if r.After(d.start) && r.Before(d.end) {
				n++
			}
		}
	}
	return n
}

// checkCABundle fails t unless both webhook configurations come to trust
// the Secret's CA. A rotation due as the applies end writes the Secret,
// then the caBundle (certs.Manager.Ensure), so the two may differ for a
// moment: the check waits up to 30 s for them to agree (CI, 2026-11-29:
// read within that moment after the fourth rotation of a run). The
// applies' webhook errors, counted above, are what shows whether the API
// server ever distrusted a serving certificate.
func checkCABundle(t *testing.T, f *framework.Framework) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, "both webhook configurations' caBundle to hold the Secret's ca.crt", func(ctx context.Context) (bool, error) {
		secret, err := f.Client.CoreV1().Secrets(namespace).Get(ctx, "apply-hygiene-tls", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ca := bytes.TrimSpace(secret.Data["ca.crt"])
		mutating, err := f.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, release, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		validating, err := f.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, release, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return bytes.Contains(mutating.Webhooks[0].ClientConfig.CABundle, ca) && bytes.Contains(validating.Webhooks[0].ClientConfig.CABundle, ca), nil
	})
}
