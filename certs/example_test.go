package certs_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/apply-hygiene/apply-hygiene/certs"
)

// Example shows the wiring in the server: Ensure once so that the webhook
// server finds a certificate when it starts, then let the controller-runtime
// manager run the Manager (mgr.Add(m)) to renew it. A fake clientset with
// the chart's webhook configurations stands in for the cluster here.
func Example() {
	ctx := context.Background()
	client := fake.NewClientset(
		&admissionregistrationv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "apply-hygiene"},
			Webhooks:   []admissionregistrationv1.MutatingWebhook{{Name: "workloads.apply-hygiene.io"}},
		},
		&admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "apply-hygiene"},
			Webhooks:   []admissionregistrationv1.ValidatingWebhook{{Name: "workloads.apply-hygiene.io"}},
		},
	)
	certDir, err := os.MkdirTemp("", "tls")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(certDir)

	m, err := certs.NewManager(client, certs.Options{
		Namespace:         "apply-hygiene",
		SecretName:        "apply-hygiene-tls",
		ServiceName:       "apply-hygiene",
		WebhookConfigName: "apply-hygiene",
		CertDir:           certDir,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := m.Ensure(ctx); err != nil {
		fmt.Println(err)
		return
	}
	// In the server: mgr.Add(m), then mgr.Start(ctx).

	secret, err := client.CoreV1().Secrets("apply-hygiene").Get(ctx, "apply-hygiene-tls", metav1.GetOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("secret keys:", slices.Sorted(maps.Keys(secret.Data)))
	vwc, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "apply-hygiene", metav1.GetOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("caBundle injected:", string(vwc.Webhooks[0].ClientConfig.CABundle) == string(secret.Data[certs.CAKey]))
	files, err := os.ReadDir(certDir)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range files {
		fmt.Println("wrote", f.Name())
	}
	// Output:
	// secret keys: [ca.crt tls.crt tls.key]
	// caBundle injected: true
	// wrote tls.crt
	// wrote tls.key
}
