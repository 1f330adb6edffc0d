package failures_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/hack/devenv"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
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

// servedCert is the certificate the server on port presents.
func servedCert(t *testing.T, port int) *x509.Certificate {
	t.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var cert *x509.Certificate
	framework.Eventually(t, 30*time.Second, "a TLS handshake with the server", func(context.Context) (bool, error) {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // reads the certificate only
		if err != nil {
			return false, nil //nolint:nilerr // not listening yet: try again
		}
		defer func() { _ = conn.Close() }()
		cert = conn.ConnectionState().PeerCertificates[0]
		return true, nil
	})
	return cert
}
