package certs

import (
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
)

// Times of the rotation table, since testNow, for testOptions (Validity
// 90 days, RenewBefore 30 days) and the default PublishDelay (1 minute).
const (
	delay = time.Minute
	// due is when a certificate issued at 0 is an hour into its renewal
	// period; 2*due for one issued at due.
	due = 60*24*time.Hour + time.Hour
	// day is a day.
	day = 24 * time.Hour
)

// rotationStep is what happens at one moment: replicas go down or come
// back (with an empty certificate directory), something else touches the
// cluster, then the listed replicas run Ensure concurrently.
type rotationStep struct {
	at      time.Duration
	down    []int
	restart []int
	tamper  func(*world)
	ensure  []int
	// outage: the served certificate had expired (the cluster was off), so
	// the new one is served at once and only the bundles in the
	// configurations now are checked, not the ones just replaced.
	outage bool
	want   rotationWant
}

// rotationWant is the state after a step, with certificates named by the
// world: the Secret's tls.crt, next.crt and ca.crt (also every webhook's
// caBundle), serve-next-after since testNow, and the certificate each
// replica serves ("" when down or not started).
type rotationWant struct {
	Served, Next   string
	Bundle         []string
	ServeNextAfter time.Duration
	Files          []string
}

func TestRotation(t *testing.T) {
	tests := map[string]struct {
		replicas int
		steps    []rotationStep
	}{
		"a renewal publishes the new CA first and serves its certificate only after the delay": {
			replicas: 2,
			steps: []rotationStep{
				{at: 0, ensure: []int{0}, want: rotationWant{Served: "L0", Bundle: []string{"CA0"}, Files: []string{"L0", ""}}},
				{at: 0, ensure: []int{1}, want: rotationWant{Served: "L0", Bundle: []string{"CA0"}, Files: []string{"L0", "L0"}}},
				{at: due, ensure: []int{0}, want: rotationWant{Served: "L0", Next: "L1", Bundle: []string{"CA1", "CA0"}, ServeNextAfter: due + delay, Files: []string{"L0", "L0"}}},
				{at: due + delay - time.Second, ensure: []int{1}, want: rotationWant{Served: "L0", Next: "L1", Bundle: []string{"CA1", "CA0"}, ServeNextAfter: due + delay, Files: []string{"L0", "L0"}}},
				{at: due + delay, ensure: []int{1}, want: rotationWant{Served: "L1", Bundle: []string{"CA1", "CA0"}, Files: []string{"L0", "L1"}}},
				{at: due + 2*delay, ensure: []int{0}, want: rotationWant{Served: "L1", Bundle: []string{"CA1", "CA0"}, Files: []string{"L1", "L1"}}},
				{at: 2 * due, ensure: []int{0}, want: rotationWant{Served: "L1", Next: "L2", Bundle: []string{"CA2", "CA1"}, ServeNextAfter: 2*due + delay, Files: []string{"L1", "L1"}}},
				{at: 2*due + delay, ensure: []int{0, 1}, want: rotationWant{Served: "L2", Bundle: []string{"CA2", "CA1"}, Files: []string{"L2", "L2"}}},
			},
		},
		"two replicas racing through a renewal publish one CA and promote once": {
			replicas: 2,
			steps: []rotationStep{
				{at: 0, ensure: []int{0, 1}, want: rotationWant{Served: "L0", Bundle: []string{"CA0"}, Files: []string{"L0", "L0"}}},
				{at: due, ensure: []int{0, 1}, want: rotationWant{Served: "L0", Next: "L1", Bundle: []string{"CA1", "CA0"}, ServeNextAfter: due + delay, Files: []string{"L0", "L0"}}},
				{at: due + delay, ensure: []int{0, 1}, want: rotationWant{Served: "L1", Bundle: []string{"CA1", "CA0"}, Files: []string{"L1", "L1"}}},
			},
		},
		"a replica restarted during the stage serves the old certificate until the promotion": {
			replicas: 2,
			steps: []rotationStep{
				{at: 0, ensure: []int{0, 1}, want: rotationWant{Served: "L0", Bundle: []string{"CA0"}, Files: []string{"L0", "L0"}}},
				{at: due, down: []int{1}, ensure: []int{0}, want: rotationWant{Served: "L0", Next: "L1", Bundle: []string{"CA1", "CA0"}, ServeNextAfter: due + delay, Files: []string{"L0", ""}}},
				{at: due + delay/2, restart: []int{1}, ensure: []int{1}, want: rotationWant{Served: "L0", Next: "L1", Bundle: []string{"CA1", "CA0"}, ServeNextAfter: due + delay, Files: []string{"L0", "L0"}}},
				{at: due + delay, ensure: []int{1}, want: rotationWant{Served: "L1", Bundle: []string{"CA1", "CA0"}, Files: []string{"L0", "L1"}}},
			},
		},
		"a replica down across two renewals comes back serving what the bundle trusts": {
			replicas: 2,
			steps: []rotationStep{
				{at: 0, ensure: []int{0, 1}, want: rotationWant{Served: "L0", Bundle: []string{"CA0"}, Files: []string{"L0", "L0"}}},
				{at: due, down: []int{1}, ensure: []int{0}, want: rotationWant{Served: "L0", Next: "L1", Bundle: []string{"CA1", "CA0"}, ServeNextAfter: due + delay, Files: []string{"L0", ""}}},
				{at: due + delay, ensure: []int{0}, want: rotationWant{Served: "L1", Bundle: []string{"CA1", "CA0"}, Files: []string{"L1", ""}}},
				{at: 2 * due, ensure: []int{0}, want: rotationWant{Served: "L1", Next: "L2", Bundle: []string{"CA2", "CA1"}, ServeNextAfter: 2*due + delay, Files: []string{"L1", ""}}},
				{at: 2*due + delay, ensure: []int{0}, want: rotationWant{Served: "L2", Bundle: []string{"CA2", "CA1"}, Files: []string{"L2", ""}}},
				{at: 2*due + 2*delay, restart: []int{1}, ensure: []int{1}, want: rotationWant{Served: "L2", Bundle: []string{"CA2", "CA1"}, Files: []string{"L2", "L2"}}},
			},
		},
		"an expired certificate is replaced at once, without its dead CA": {
			replicas: 1,
			steps: []rotationStep{
				{at: 0, ensure: []int{0}, want: rotationWant{Served: "L0", Bundle: []string{"CA0"}, Files: []string{"L0"}}},
				{at: 100 * day, ensure: []int{0}, outage: true, want: rotationWant{Served: "L1", Bundle: []string{"CA1"}, Files: []string{"L1"}}},
			},
		},
		"a staged certificate is served at once when the old one expired meanwhile": {
			replicas: 1,
			steps: []rotationStep{
				{at: 0, ensure: []int{0}, want: rotationWant{Served: "L0", Bundle: []string{"CA0"}, Files: []string{"L0"}}},
				{at: due, ensure: []int{0}, want: rotationWant{Served: "L0", Next: "L1", Bundle: []string{"CA1", "CA0"}, ServeNextAfter: due + delay, Files: []string{"L0"}}},
				{at: 91 * day, ensure: []int{0}, want: rotationWant{Served: "L1", Bundle: []string{"CA1", "CA0"}, Files: []string{"L1"}}},
			},
		},
		"a bundle reverted in the configurations during the stage postpones the new certificate": {
			replicas: 1,
			steps: []rotationStep{
				{at: 0, ensure: []int{0}, want: rotationWant{Served: "L0", Bundle: []string{"CA0"}, Files: []string{"L0"}}},
				{at: due, ensure: []int{0}, want: rotationWant{Served: "L0", Next: "L1", Bundle: []string{"CA1", "CA0"}, ServeNextAfter: due + delay, Files: []string{"L0"}}},
				{at: due + delay, tamper: revertBundles, ensure: []int{0}, want: rotationWant{Served: "L0", Next: "L1", Bundle: []string{"CA1", "CA0"}, ServeNextAfter: due + 2*delay, Files: []string{"L0"}}},
				{at: due + 2*delay - time.Second, ensure: []int{0}, want: rotationWant{Served: "L0", Next: "L1", Bundle: []string{"CA1", "CA0"}, ServeNextAfter: due + 2*delay, Files: []string{"L0"}}},
				{at: due + 2*delay, ensure: []int{0}, want: rotationWant{Served: "L1", Bundle: []string{"CA1", "CA0"}, Files: []string{"L1"}}},
			},
		},
		"an unusable staged certificate is dropped and a new one staged": {
			replicas: 1,
			steps: []rotationStep{
				{at: 0, ensure: []int{0}, want: rotationWant{Served: "L0", Bundle: []string{"CA0"}, Files: []string{"L0"}}},
				{at: due, ensure: []int{0}, want: rotationWant{Served: "L0", Next: "L1", Bundle: []string{"CA1", "CA0"}, ServeNextAfter: due + delay, Files: []string{"L0"}}},
				{at: due + delay/2, tamper: corruptNextKey, ensure: []int{0}, want: rotationWant{Served: "L0", Next: "L2", Bundle: []string{"CA2", "CA0"}, ServeNextAfter: due + delay/2 + delay, Files: []string{"L0"}}},
				{at: due + delay/2 + delay, ensure: []int{0}, want: rotationWant{Served: "L2", Bundle: []string{"CA2", "CA0"}, Files: []string{"L2"}}},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, tc.replicas, webhookConfigs(testConfig)...)
			for i, st := range tc.steps {
				w.now = testNow.Add(st.at)
				for _, r := range st.down {
					w.replicas[r].up = false
				}
				for _, r := range st.restart {
					w.restart(r)
				}
				if st.tamper != nil {
					st.tamper(w)
					w.observe()
				}
				w.ensure(st.ensure...)
				if diff := cmp.Diff(st.want, w.state()); diff != "" {
					t.Errorf("step %d (at %s): state (-want +got):\n%s", i, st.at, diff)
				}
				w.assertNoHandshakeFails(!st.outage)
			}
		})
	}
}

// state names what the Secret, the configurations and the replicas hold,
// and fails the test when the Secret's keys do not match its stage or a
// webhook's caBundle is not the Secret's ca.crt.
func (w *world) state() rotationWant {
	w.t.Helper()
	s := readState(w.t, w.client, w.t.TempDir())
	var got rotationWant
	got.Served = w.name(mustCerts(w.t, s.secret.Data[CertKey])[0], "L")
	got.Bundle = w.bundleNames(s.secret.Data[CAKey])
	wantKeys := []string{CAKey, CertKey, KeyKey}
	if next := s.secret.Data[NextCertKey]; len(next) > 0 {
		got.Next = w.name(mustCerts(w.t, next)[0], "L")
		wantKeys = []string{CAKey, NextCertKey, NextKeyKey, CertKey, KeyKey}
		after, err := time.Parse(time.RFC3339Nano, s.secret.Annotations[ServeNextAfterAnnotation])
		if err != nil {
			w.t.Errorf("the staged secret's %s: %v", ServeNextAfterAnnotation, err)
		}
		got.ServeNextAfter = after.Sub(testNow)
	} else if a, ok := s.secret.Annotations[ServeNextAfterAnnotation]; ok {
		w.t.Errorf("the secret has no next certificate but %s=%s", ServeNextAfterAnnotation, a)
	}
	if diff := cmp.Diff(wantKeys, slices.Sorted(maps.Keys(s.secret.Data))); diff != "" {
		w.t.Errorf("secret keys (-want +got):\n%s", diff)
	}
	for i, b := range append(append([][]byte{}, s.mutating...), s.validating...) {
		if string(b) != string(s.secret.Data[CAKey]) {
			w.t.Errorf("webhook %d's caBundle is %v, not the secret's %s", i, w.bundleNames(b), CAKey)
		}
	}
	got.Files = w.served()
	return got
}

// revertBundles puts the first bundle the configurations ever held back
// into every webhook, as an old replica or a re-applied manifest might.
func revertBundles(w *world) {
	w.t.Helper()
	ctx := w.t.Context()
	api := w.client.AdmissionregistrationV1()
	first := w.bundles[0].pem
	mwc, err := api.MutatingWebhookConfigurations().Get(ctx, testConfig, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	for i := range mwc.Webhooks {
		mwc.Webhooks[i].ClientConfig.CABundle = first
	}
	if _, err := api.MutatingWebhookConfigurations().Update(ctx, mwc, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
	vwc, err := api.ValidatingWebhookConfigurations().Get(ctx, testConfig, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	setBundle(vwc.Webhooks, first)
	if _, err := api.ValidatingWebhookConfigurations().Update(ctx, vwc, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

func setBundle(hooks []admissionregistrationv1.ValidatingWebhook, bundle []byte) {
	for i := range hooks {
		hooks[i].ClientConfig.CABundle = bundle
	}
}

// corruptNextKey replaces the staged key with one that does not match
// next.crt.
func corruptNextKey(w *world) {
	w.t.Helper()
	secrets := w.client.CoreV1().Secrets(testNamespace)
	sec, err := secrets.Get(w.t.Context(), testSecret, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	sec.Data[NextKeyKey] = mustGenerate(w.t, w.opts.hosts(), w.now, w.opts.Validity).key
	if _, err := secrets.Update(w.t.Context(), sec, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

// A replica reads the staged Secret, then another one finds the bundle
// missing from a configuration, pushes serve-next-after back and injects
// it; the first one now finds the bundle injected, but its promotion
// carries the resourceVersion read before the push-back: it loses, reads
// again and waits.
func TestPromotionLosesToAPushBack(t *testing.T) {
	w := newWorld(t, 1, webhookConfigs(testConfig)...)
	w.ensure(0)
	w.now = testNow.Add(due)
	w.ensure(0)
	w.now = testNow.Add(due + delay)
	pushedTo := w.now.Add(delay)
	armed := true
	w.client.PrependReactor("get", "validatingwebhookconfigurations", func(clienttesting.Action) (bool, runtime.Object, error) {
		if !armed {
			return false, nil, nil
		}
		armed = false
		obj, err := w.client.Tracker().Get(secretsResource, testNamespace, testSecret)
		if err != nil {
			return true, nil, err
		}
		sec := obj.(*corev1.Secret).DeepCopy()
		sec.Annotations[ServeNextAfterAnnotation] = pushedTo.Format(time.RFC3339Nano)
		n, _ := strconv.Atoi(sec.ResourceVersion)
		sec.ResourceVersion = strconv.Itoa(n + 1)
		return false, nil, w.client.Tracker().Update(secretsResource, sec, testNamespace)
	})
	w.ensure(0)
	want := rotationWant{Served: "L0", Next: "L1", Bundle: []string{"CA1", "CA0"}, ServeNextAfter: due + 2*delay, Files: []string{"L0"}}
	if diff := cmp.Diff(want, w.state()); diff != "" {
		t.Errorf("after the lost promotion (-want +got):\n%s", diff)
	}
	w.now = pushedTo
	w.ensure(0)
	want = rotationWant{Served: "L1", Bundle: []string{"CA1", "CA0"}, Files: []string{"L1"}}
	if diff := cmp.Diff(want, w.state()); diff != "" {
		t.Errorf("after the pushed-back time (-want +got):\n%s", diff)
	}
	w.assertNoHandshakeFails(true)
}
