package failures_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// The server's serving certificate expired (file TLS mode: the files in
// --cert-dir, e.g. from a Secret nobody renewed). The API server refuses
// it on every new connection: under Ignore the write goes through
// unchecked (an imperative edit apply-hygiene denies passes without a
// word), under Fail it is rejected with the API server's TLS error. With
// the valid certificate back, the same write is reviewed again.
func TestCertificateExpired(t *testing.T) {
	tests := map[string]struct {
		policy       string
		wantExitCode int
		wantStdout   []string
		// wantStderr returns the expected stderr lines, anchored regular
		// expressions, for the webhook's port and the certificate's end.
		wantStderr   func(port int, notAfter time.Time) []string
		wantReplicas int
	}{
		"failurePolicy Ignore: the write goes through unchecked": {
			policy:       "Ignore",
			wantStdout:   []string{"deployment.apps/web scaled"},
			wantStderr:   func(int, time.Time) []string { return nil },
			wantReplicas: 5,
		},
		"failurePolicy Fail: the write is rejected with the TLS error": {
			policy:       "Fail",
			wantExitCode: 1,
			wantStderr: func(port int, notAfter time.Time) []string {
				return []string{regexp.QuoteMeta(fmt.Sprintf(`Error from server (InternalError): Internal error occurred: `+
					`failed calling webhook "validate.apply-hygiene.io": failed to call webhook: `+
					`Post "https://127.0.0.1:%d/validate?timeout=5s": tls: failed to verify certificate: `+
					`x509: certificate has expired or is not yet valid: current time `, port)) +
					`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ` + regexp.QuoteMeta(" is after "+notAfter.UTC().Format(time.RFC3339))}
			},
			wantReplicas: 3,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			framework.WithFailurePolicy(t, tc.policy)
			f := newWeb(t)
			wantReviewed(t, f, 5, 3)

			notAfter := time.Now().Add(-time.Hour).Truncate(time.Second)
			restore := serveExpiredCert(t, notAfter)
			res := scale(t, f, 5)
			if res.ExitCode != tc.wantExitCode {
				t.Errorf("kubectl scale exited %d, want %d", res.ExitCode, tc.wantExitCode)
			}
			framework.WantLines(t, res.Stdout, tc.wantStdout...)
			if want := tc.wantStderr(framework.Webhook(t).Port, notAfter); want == nil {
				framework.WantLines(t, res.Stderr)
			} else {
				framework.WantMatch(t, res.Stderr, want...)
			}
			wantReplicas(t, f, tc.wantReplicas)
			// No call reached the server since it started with the
			// expired certificate.
			if n := framework.Webhook(t).ValidateCalls(t.Context()); n != 0 {
				t.Errorf("the server answered %d validating calls with the expired certificate, want 0", n)
			}

			restore()
			wantReviewed(t, f, 7, tc.wantReplicas)
		})
	}
}

// serveExpiredCert replaces the server's certificate with one from the
// same CA that expired at notAfter, restarts the server so that the API
// server's open connections end and new ones see it, and checks that it
// is served. The returned function (also run at cleanup) puts a valid
// certificate back and waits until the API server calls the webhook.
func serveExpiredCert(t *testing.T, notAfter time.Time) (restore func()) {
	t.Helper()
	w, cp := framework.Webhook(t), framework.ControlPlane(t)
	r := w.Replicas()[0]
	certPEM, keyPEM, err := cp.ServingCertValidFor(notAfter.Add(-24*time.Hour), notAfter)
	if err != nil {
		t.Fatal(err)
	}
	restored := false
	restore = func() {
		if restored {
			return
		}
		restored = true
		valid, key, err := cp.ServingCert()
		if err == nil {
			err = writeCert(r, valid, key)
		}
		if err == nil {
			err = w.Restart(context.Background(), cp)
		}
		if err != nil {
			t.Errorf("restoring a valid serving certificate: %v", err)
			return
		}
		waitServed(t, r, valid)
	}
	t.Cleanup(restore)
	if err := writeCert(r, certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	if err := r.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitServed(t, r, certPEM)
	return restore
}

// writeCert writes the server's tls.crt and tls.key.
func writeCert(r *devenv.Replica, certPEM, keyPEM []byte) error {
	if err := os.WriteFile(filepath.Join(r.CertDir, "tls.key"), keyPEM, 0o600); err != nil {
		return fmt.Errorf("writing the serving key: %w", err)
	}
	if err := os.WriteFile(filepath.Join(r.CertDir, "tls.crt"), certPEM, 0o600); err != nil {
		return fmt.Errorf("writing the serving certificate: %w", err)
	}
	return nil
}

// waitServed waits until a TLS handshake with the server presents
// certPEM.
func waitServed(t *testing.T, r *devenv.Replica, certPEM []byte) {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatal("the serving certificate is not PEM")
	}
	framework.Eventually(t, 30*time.Second, "the server presenting the new certificate", func(context.Context) (bool, error) {
		cert, err := presented(r.Port)
		return err == nil && bytes.Equal(cert.Raw, block.Bytes), nil
	})
}

// servedCert is the certificate the server on port presents, once it
// listens.
func servedCert(t *testing.T, port int) *x509.Certificate {
	t.Helper()
	var cert *x509.Certificate
	framework.Eventually(t, 30*time.Second, "a TLS handshake with the server", func(context.Context) (bool, error) {
		var err error
		cert, err = presented(port)
		return err == nil, nil
	})
	return cert
}

// presented is the certificate that a TLS handshake with the server on
// port sees, expired or not.
func presented(port int) (*x509.Certificate, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // reads the certificate only
	if err != nil {
		return nil, fmt.Errorf("a TLS handshake with %s: %w", addr, err)
	}
	defer func() { _ = conn.Close() }()
	return conn.ConnectionState().PeerCertificates[0], nil
}
