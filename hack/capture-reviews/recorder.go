package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// recorder is a webhook that allows every request and keeps its review.
type recorder struct {
	srv  *http.Server
	url  string
	mu   sync.Mutex
	seen []json.RawMessage
}

func startRecorder(cp *controlplane.ControlPlane) (*recorder, error) {
	certPEM, keyPEM, err := cp.ServingCert()
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("loading serving certificate: %w", err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, fmt.Errorf("listening: %w", err)
	}
	r := &recorder{url: "https://" + l.Addr().String() + "/record"}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(l) }()
	return r, nil
}

func (r *recorder) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.seen = append(r.seen, body)
	r.mu.Unlock()
	review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}

// take returns and forgets every review recorded so far.
func (r *recorder) take() []json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := r.seen
	r.seen = nil
	return seen
}

func (r *recorder) close() { _ = r.srv.Close() }

// register installs the recording webhook for apps/v1 workloads and their
// /scale, and waits until the API server calls it.
func (r *recorder) register(ctx context.Context, cp *controlplane.ControlPlane) error {
	cfg, err := cp.RESTConfig()
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	hook := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "capture-reviews"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "record.capture-reviews.apply-hygiene.io",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &r.url, CABundle: cp.CAPEM()},
			SideEffects:             &none,
			FailurePolicy:           &fail,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](10),
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups:   []string{"apps"},
					APIVersions: []string{"v1"},
					Resources:   []string{"deployments", "statefulsets", "daemonsets", "deployments/scale", "statefulsets/scale"},
				},
			}},
		}},
	}
	if _, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, hook, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("registering the recorder: %w", err)
	}
	return r.waitUntilCalled(ctx, client)
}

// waitUntilCalled probes with dry-run creates until the recorder sees one:
// webhook configurations take effect asynchronously.
func (r *recorder) waitUntilCalled(ctx context.Context, client kubernetes.Interface) error {
	probe := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"probe"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`)
	for range 100 {
		_, err := client.AppsV1().RESTClient().Post().Namespace("default").Resource("deployments").
			Param("dryRun", "All").Body(probe).SetHeader("Content-Type", "application/json").DoRaw(ctx)
		if err != nil {
			return fmt.Errorf("probing the recorder: %w", err)
		}
		if len(r.take()) > 0 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the API server never called the recorder at %s", r.url)
}
