package certs

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cert-manager/cert-manager/pkg/util/pki"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
)

const (
	testNamespace = "apply-hygiene"
	testSecret    = "apply-hygiene-tls"
	testService   = "apply-hygiene"
	testConfig    = "apply-hygiene"
)

// testNow is the fixed "now" of the fake-client tests.
var testNow = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func testOptions(t *testing.T) Options {
	t.Helper()
	return Options{
		Namespace:         testNamespace,
		SecretName:        testSecret,
		ServiceName:       testService,
		WebhookConfigName: testConfig,
		CertDir:           t.TempDir(),
		Validity:          90 * 24 * time.Hour,
		RenewBefore:       30 * 24 * time.Hour,
		Now:               func() time.Time { return testNow },
	}
}

// webhookConfigs returns both configurations with two webhooks each and
// no caBundle, as the chart renders them.
func webhookConfigs(name string) []runtime.Object {
	svc := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: testNamespace, Name: testService, Path: &path,
		}}
	}
	none := admissionregistrationv1.SideEffectClassNone
	ignore := admissionregistrationv1.Ignore
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, wh := range []string{"workloads.apply-hygiene.io", "scale.apply-hygiene.io"} {
		mutating.Webhooks = append(mutating.Webhooks, admissionregistrationv1.MutatingWebhook{
			Name: wh, ClientConfig: svc("/mutate"), SideEffects: &none, FailurePolicy: &ignore,
			AdmissionReviewVersions: []string{"v1"},
		})
		validating.Webhooks = append(validating.Webhooks, admissionregistrationv1.ValidatingWebhook{
			Name: wh, ClientConfig: svc("/validate"), SideEffects: &none, FailurePolicy: &ignore,
			AdmissionReviewVersions: []string{"v1"},
		})
	}
	return []runtime.Object{mutating, validating}
}

// secretWith returns the Secret as a replica would have stored mat.
func secretWith(mat material) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: testSecret, Namespace: testNamespace},
		Type:       corev1.SecretTypeTLS,
		Data:       mat.data(),
	}
}

func mustGenerate(t *testing.T, hosts []string, now time.Time, validity time.Duration) material {
	t.Helper()
	mat, err := generate(hosts, now, validity, nil)
	if err != nil {
		t.Fatalf("generating test material: %v", err)
	}
	return mat
}

func mustCerts(t *testing.T, pemBytes []byte) []*x509.Certificate {
	t.Helper()
	certs, err := pki.DecodeX509CertificateSetBytes(pemBytes)
	if err != nil {
		t.Fatalf("decoding certificates: %v", err)
	}
	return certs
}

// state is what a round of Ensure leaves behind.
type state struct {
	secret     *corev1.Secret
	mutating   [][]byte
	validating [][]byte
	cert, key  []byte
}

// ensured runs one Ensure of a new Manager and returns the Manager and
// the state it left, checked for consistency.
func ensured(t *testing.T, client kubernetes.Interface, opts Options) (*Manager, state) {
	t.Helper()
	m, err := NewManager(client, opts)
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	if err := m.Ensure(t.Context()); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	s := readState(t, client, opts.CertDir)
	assertConsistent(t, s, opts, testNow)
	return m, s
}

func readState(t *testing.T, client kubernetes.Interface, certDir string) state {
	t.Helper()
	ctx := t.Context()
	var s state
	var err error
	s.secret, err = client.CoreV1().Secrets(testNamespace).Get(ctx, testSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting the secret: %v", err)
	}
	if mwc, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, testConfig, metav1.GetOptions{}); err == nil {
		for _, wh := range mwc.Webhooks {
			s.mutating = append(s.mutating, wh.ClientConfig.CABundle)
		}
	}
	if vwc, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, testConfig, metav1.GetOptions{}); err == nil {
		for _, wh := range vwc.Webhooks {
			s.validating = append(s.validating, wh.ClientConfig.CABundle)
		}
	}
	s.cert, _ = os.ReadFile(filepath.Join(certDir, CertKey))
	s.key, _ = os.ReadFile(filepath.Join(certDir, KeyKey))
	return s
}

// assertConsistent checks that the Secret is fit for use at now (or a
// renewal staged in it, see assertNoHandshakeFails for the rotation), that
// every webhook has its bundle and that the files are its key pair.
func assertConsistent(t *testing.T, s state, opts Options, now time.Time) {
	t.Helper()
	mat, p, err := parse(s.secret.Data)
	if err != nil {
		t.Fatalf("the secret does not parse: %v", err)
	}
	if mat.staged() {
		// A staged renewal serves the old certificate, trusted by the
		// bundle's second CA, and holds the next one, signed by the first.
		if err := p.usable(opts.hosts(), now, p.cas); err != nil {
			t.Errorf("the served certificate is not usable: %v", err)
		}
		next, err := parseNext(mat, p.cas)
		if err == nil {
			err = next.check(opts.hosts(), now, opts.RenewBefore)
		}
		if err != nil {
			t.Errorf("the staged certificate is not fit for use: %v", err)
		}
	} else if err := p.check(opts.hosts(), now, opts.RenewBefore); err != nil {
		t.Errorf("the secret is not fit for use: %v", err)
	}
	bundle := s.secret.Data[CAKey]
	for kind, bundles := range map[string][][]byte{"mutating": s.mutating, "validating": s.validating} {
		if len(bundles) != 2 {
			t.Errorf("%s configuration has %d webhooks, want 2", kind, len(bundles))
		}
		for i, b := range bundles {
			if string(b) != string(bundle) {
				t.Errorf("%s webhook %d: caBundle is not the secret's %s", kind, i, CAKey)
			}
		}
	}
	if string(s.cert) != string(s.secret.Data[CertKey]) || string(s.key) != string(s.secret.Data[KeyKey]) {
		t.Errorf("the files in the cert dir are not the secret's key pair")
	}
}

type (
	mwcType = admissionregistrationv1.MutatingWebhookConfiguration
	vwcType = admissionregistrationv1.ValidatingWebhookConfiguration
)
