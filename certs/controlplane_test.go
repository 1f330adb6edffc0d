package certs

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// startControlPlane starts a real control plane, or skips the test when its
// binaries are missing (fails instead under APPLY_HYGIENE_E2E=required).
func startControlPlane(t *testing.T) kubernetes.Interface {
	t.Helper()
	binDir := controlplane.RequireTools(t, controlplane.Binaries...)
	cp, err := controlplane.Start(t.Context(), controlplane.Options{BinDir: binDir, Controllers: []string{"serviceaccount-controller"}})
	if err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	cfg, err := cp.RESTConfig()
	if err != nil {
		t.Fatalf("control plane REST config: %v", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("creating a client: %v", err)
	}
	return client
}

// TestManagerAgainstAPIServer runs two replicas against a real API server:
// they race to create the Secret, inject the caBundle, and a forced
// rotation keeps the old CA trusted.
func TestManagerAgainstAPIServer(t *testing.T) {
	client := startControlPlane(t)
	ctx := t.Context()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the namespace: %v", err)
	}
	cfgs := webhookConfigs(testConfig)
	mwc, vwc := cfgs[0], cfgs[1]
	if _, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc.(*mwcType), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the mutating configuration: %v", err)
	}
	if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc.(*vwcType), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the validating configuration: %v", err)
	}

	now := time.Now()
	clock := func() time.Time { return now }
	replicas := make([]*Manager, 2)
	dirs := make([]string, 2)
	for i := range replicas {
		opts := testOptions(t)
		opts.Now = func() time.Time { return clock() }
		dirs[i] = opts.CertDir
		m, err := NewManager(client, opts)
		if err != nil {
			t.Fatalf("NewManager: %v", err)
		}
		replicas[i] = m
	}

	ensureAll := func(what string) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, len(replicas))
		for i, m := range replicas {
			wg.Go(func() { errs[i] = m.Ensure(ctx) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s: replica %d: Ensure: %v", what, i, err)
			}
		}
	}

	ensureAll("first start")
	first := readState(t, client, dirs[0])
	assertConsistent(t, first, replicas[0].opts, now)
	if second := readState(t, client, dirs[1]); !bytes.Equal(second.cert, first.cert) {
		t.Fatalf("the replicas serve different certificates after racing to create the secret")
	}
	if n := len(mustCerts(t, first.secret.Data[CAKey])); n != 1 {
		t.Errorf("the first CA bundle has %d certificates, want 1", n)
	}
	assertServes(t, dirs[0], first.mutating[0])

	// Jump into the renewal period: a replica stages the renewal (new CA
	// published, old certificate still served), and after PublishDelay a
	// replica promotes the new certificate; the other one picks it up on
	// its next round.
	later := now.Add(replicas[0].opts.Validity - replicas[0].opts.RenewBefore + time.Hour)
	clock = func() time.Time { return later }
	if err := replicas[0].Ensure(ctx); err != nil {
		t.Fatalf("staging: %v", err)
	}
	staged := readState(t, client, dirs[0])
	assertConsistent(t, staged, replicas[0].opts, later)
	if !bytes.Equal(staged.cert, first.cert) || len(staged.secret.Data[NextCertKey]) == 0 {
		t.Fatalf("the renewal served the new certificate before publishing its CA")
	}
	cas := mustCerts(t, staged.secret.Data[CAKey])
	if len(cas) != 2 || !cas[1].Equal(mustCerts(t, first.secret.Data[CAKey])[0]) {
		t.Fatalf("the staged bundle is not the new CA followed by the previous one")
	}

	promoteAt := later.Add(replicas[0].opts.PublishDelay)
	clock = func() time.Time { return promoteAt }
	if err := replicas[0].Ensure(ctx); err != nil {
		t.Fatalf("promoting: %v", err)
	}
	rotated := readState(t, client, dirs[0])
	assertConsistent(t, rotated, replicas[0].opts, promoteAt)
	if !bytes.Equal(rotated.cert, staged.secret.Data[NextCertKey]) {
		t.Fatalf("the staged certificate was not promoted after PublishDelay")
	}
	if !bytes.Equal(rotated.secret.Data[CAKey], staged.secret.Data[CAKey]) {
		t.Fatalf("the promotion changed the CA bundle")
	}
	// The replica that has not noticed yet still serves the old
	// certificate, which the injected bundle must keep trusting.
	assertServes(t, dirs[1], rotated.validating[0])
	if err := replicas[1].Ensure(ctx); err != nil {
		t.Fatalf("second replica after the rotation: %v", err)
	}
	if caughtUp := readState(t, client, dirs[1]); !bytes.Equal(caughtUp.cert, rotated.cert) {
		t.Errorf("the second replica did not pick up the rotated certificate")
	}
	assertServes(t, dirs[1], rotated.validating[0])
}

// assertServes checks that the key pair in dir is loadable and trusted by
// bundle for the Service's name, as the API server would check it.
func assertServes(t *testing.T, dir string, bundle []byte) {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, CertKey), filepath.Join(dir, KeyKey))
	if err != nil {
		t.Fatalf("loading the key pair in %s: %v", dir, err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(bundle) {
		t.Fatalf("the caBundle holds no certificate")
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatalf("parsing the served certificate: %v", err)
	}
	host := testService + "." + testNamespace + ".svc"
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, CurrentTime: leaf.NotBefore.Add(time.Hour)}); err != nil {
		t.Errorf("the API server would not trust the served certificate: %v", err)
	}
}
