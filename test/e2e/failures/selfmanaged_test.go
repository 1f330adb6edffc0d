package failures_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// With self-managed TLS an expired certificate is not a failure users
// see: a server that starts after its certificate expired (the cluster
// was off longer than the validity) replaces it before it serves. The
// certificate it presents is valid and signed by another CA than the
// expired one, the API server trusts it (Restart waits for a call), and
// under failurePolicy Fail the same kubectl scale is reviewed again, with
// no one touching the Secret.
func TestSelfManagedCertificateExpiredWhileDown(t *testing.T) {
	cp := framework.ControlPlane(t)
	// A 10 s certificate: the test waits for it to expire.
	other := withServer(t, devenv.Options{Values: []string{"failurePolicy=Fail"}, SelfManagedTLS: true,
		ServerArgs: []string{"--tls-validity=10s", "--tls-renew-before=4s", "--tls-check-interval=1s"}})
	f := newWeb(t)
	wantReviewed(t, f, 5, 3)
	first := servedCert(t, other.Port)

	if err := other.Stop(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(first.NotAfter) + time.Second)
	t.Logf("the certificate served until the stop expired at %s", first.NotAfter.UTC().Format(time.RFC3339))
	// Restart returns once the API server calls the webhook again.
	if err := other.Restart(t.Context(), cp); err != nil {
		t.Fatal(err)
	}
	now := servedCert(t, other.Port)
	if !now.NotAfter.After(time.Now()) {
		t.Errorf("after the restart the server presents a certificate that expired at %s", now.NotAfter)
	}
	if bytes.Equal(now.AuthorityKeyId, first.AuthorityKeyId) {
		t.Errorf("the new certificate was signed by the expired CA, want a new CA")
	}
	wantReviewed(t, f, 7, 3)
}
