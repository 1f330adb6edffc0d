package webhook_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// stampAnnotation is the pod-template annotation the stamper sets.
const stampAnnotation = "example.com/stamped-at"

// stamper is a second mutating webhook, as a platform team might run one:
// on every Deployment and StatefulSet created, and on every update that
// changes the pod template, it stamps stampAnnotation with a counter. A
// rollout undo then restores a template that no revision has exactly.
type stamper struct {
	count atomic.Int64
}

// startStamper runs a stamper over HTTPS on 127.0.0.1 with its own
// self-signed CA, registers it for the test's namespace and waits until
// the API server calls it. Its configuration's name sorts before
// apply-hygiene's, so the API server calls it first (mutating webhooks run
// in the order of their configurations' names): apply-hygiene sees the
// stamped template, as it would behind any webhook ordered before it.
func startStamper(t *testing.T, f *framework.Framework) {
	t.Helper()
	startMutatingWebhook(t, f, "a-stamper-", &stamper{}, func(d *appsv1.Deployment) bool {
		_, ok := d.Spec.Template.Annotations[stampAnnotation]
		return ok
	})
}

// startMutatingWebhook runs handler over HTTPS on 127.0.0.1 with its own
// self-signed CA, registers it for the test's namespace under a
// configuration named prefix plus the namespace (ordered before
// apply-hygiene's when prefix sorts first) and waits until a dry-run
// create comes back as mutated says.
func startMutatingWebhook(t *testing.T, f *framework.Framework, prefix string, handler http.Handler, mutated func(*appsv1.Deployment) bool) {
	t.Helper()
	cert, caPEM := stamperTLS(t)
	srv := httptest.NewUnstartedServer(handler)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	registerStamper(t, f, prefix+f.Namespace, srv.URL+"/mutate", caPEM)
	waitForStamper(t, f, mutated)
}

func (s *stamper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	patch, err := s.patch(review.Request)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if patch != nil {
		resp.Patch, resp.PatchType = patch, ptr.To(admissionv1.PatchTypeJSONPatch)
	}
	review.Request, review.Response = nil, resp
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}

// patch is the JSON patch that stamps the template of a new object or of
// an update that changed the template; nil for other writes.
func (s *stamper) patch(req *admissionv1.AdmissionRequest) ([]byte, error) {
	newT, err := templateOf(req.Object.Raw)
	if err != nil {
		return nil, err
	}
	if len(req.OldObject.Raw) > 0 {
		oldT, err := templateOf(req.OldObject.Raw)
		if err != nil {
			return nil, err
		}
		if unstamped(oldT) == unstamped(newT) {
			return nil, nil
		}
	}
	value := strconv.FormatInt(s.count.Add(1), 10)
	op := map[string]any{"op": "add", "path": "/spec/template/metadata/annotations/example.com~1stamped-at", "value": value}
	if newT.Annotations == nil {
		op = map[string]any{"op": "add", "path": "/spec/template/metadata/annotations", "value": map[string]string{stampAnnotation: value}}
	}
	return json.Marshal([]any{op})
}

// templateOf decodes the pod template of a Deployment or StatefulSet.
func templateOf(raw []byte) (corev1.PodTemplateSpec, error) {
	var obj struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	err := json.Unmarshal(raw, &obj)
	return obj.Spec.Template, err
}

// unstamped encodes a template without stampAnnotation, for comparing.
func unstamped(tpl corev1.PodTemplateSpec) string {
	tpl = *tpl.DeepCopy()
	delete(tpl.Annotations, stampAnnotation)
	if len(tpl.Annotations) == 0 {
		tpl.Annotations = nil
	}
	raw, _ := json.Marshal(tpl)
	return string(raw)
}

// registerStamper adds a MutatingWebhookConfiguration name for a test's
// mutating webhook (url mode, scoped to the test's namespace) and removes
// it when the test ends.
func registerStamper(t *testing.T, f *framework.Framework, name, url string, caPEM []byte) {
	t.Helper()
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:         "stamp.example.com",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"},
					Resources: []string{"deployments", "statefulsets"}},
			}},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": f.Namespace}},
			FailurePolicy:     ptr.To(admissionregistrationv1.Fail),
			SideEffects:       ptr.To(admissionregistrationv1.SideEffectClassNone),
			// It runs before apply-hygiene, whose undo repair leaves the
			// template alone.
			ReinvocationPolicy:      ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
			TimeoutSeconds:          ptr.To[int32](10),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	api := f.Client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	if _, err := api.Create(t.Context(), cfg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("registering the test's mutating webhook: %v", err)
	}
	t.Cleanup(func() {
		if err := api.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("removing the test's mutating webhook: %v", err)
		}
	})
}

// waitForStamper waits until a dry-run create in the test's namespace
// comes back as mutated says: webhook configurations take effect
// asynchronously.
func waitForStamper(t *testing.T, f *framework.Framework, mutated func(*appsv1.Deployment) bool) {
	t.Helper()
	labels := map[string]string{"app": "stamper-probe"}
	probe := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "stamper-probe"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
		},
	}
	framework.Eventually(t, 30*time.Second, "the test's mutating webhook", func(ctx context.Context) (bool, error) {
		got, err := f.Client.AppsV1().Deployments(f.Namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Logf("probing the test's mutating webhook: %v", err)
			return false, nil
		}
		return mutated(got), nil
	})
}

// stamperTLS makes a self-signed CA and a serving certificate for
// 127.0.0.1 signed by it; it returns the certificate and the CA in PEM.
func stamperTLS(t *testing.T) (tls.Certificate, []byte) {
	t.Helper()
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTemplate := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "apply-hygiene e2e stamper CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatalf("creating the stamper's CA: %v", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serving := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, serving, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatalf("creating the stamper's serving certificate: %v", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}
