package reliability_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The running server's TLS (cmd/apply-hygiene secureTLS): TLS 1.2 at
// least, 1.3 by default, for 1.2 only forward-secret AEAD suites, and no
// plain HTTP.
func TestTLSHandshakes(t *testing.T) {
	addr := "127.0.0.1:" + strconv.Itoa(framework.Webhook(t).Port)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(framework.ControlPlane(t).CAPEM())
	tests := map[string]struct {
		config      *tls.Config
		wantVersion uint16
		wantErr     string
	}{
		"a default client negotiates TLS 1.3": {config: &tls.Config{}, wantVersion: tls.VersionTLS13},
		"a TLS 1.2 client with forward-secret AEAD suites connects": {config: &tls.Config{MaxVersion: tls.VersionTLS12},
			wantVersion: tls.VersionTLS12},
		"a TLS 1.1 client is refused": {config: &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11},
			wantErr: "remote error: tls: protocol version not supported"},
		"a TLS 1.2 client offering only CBC suites is refused": {config: &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{
			tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
			tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA, tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
		}}, wantErr: "remote error: tls: handshake failure"},
		"a TLS 1.2 client offering only RSA key exchange is refused": {config: &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{
			tls.TLS_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_RSA_WITH_AES_256_GCM_SHA384, tls.TLS_RSA_WITH_AES_128_CBC_SHA,
		}}, wantErr: "remote error: tls: handshake failure"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := tc.config.Clone()
			cfg.RootCAs = pool
			conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
			if tc.wantErr != "" {
				if err == nil {
					_ = conn.Close()
					t.Fatalf("handshake succeeded, want %q", tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("handshake error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("handshake: %v", err)
			}
			defer func() { _ = conn.Close() }()
			st := conn.ConnectionState()
			if st.Version != tc.wantVersion {
				t.Errorf("negotiated %s, want %s", tls.VersionName(st.Version), tls.VersionName(tc.wantVersion))
			}
			t.Logf("negotiated %s with %s", tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite))
		})
	}
	t.Run("plain HTTP is refused", func(t *testing.T) {
		client := &http.Client{Timeout: 5 * time.Second}
		resp, err := client.Post("http://"+addr+"/validate", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatalf("plain HTTP: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Client sent an HTTP request to an HTTPS server.") {
			t.Errorf("plain HTTP got %d %q, want Go's 400 for HTTP on an HTTPS port", resp.StatusCode, body)
		}
	})
}
