package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
)

// What controller-runtime's webhook server does when its context ends,
// the way the manager ends it on shutdown: a review in flight is finished
// and answered over its HTTP/2 connection, while a new request finds the
// listener closed (the API server then calls another replica). Without
// keepThroughShutdown the review's context is canceled at the start of
// the drain, which would answer it as --failure-policy says.
func TestWebhookServerDrainsReviewsInFlight(t *testing.T) {
	tests := map[string]struct {
		keep       bool
		wantCtxErr error
	}{
		"with keepThroughShutdown: the review finishes":       {keep: true, wantCtxErr: nil},
		"without it: the server cancels the review's context": {keep: false, wantCtxErr: context.Canceled},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			started, finish := make(chan struct{}), make(chan struct{})
			ctxErr := make(chan error, 1)
			var calls atomic.Int32
			var review http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) == 1 { // the review in flight
					close(started)
					select {
					case <-finish:
					case <-time.After(10 * time.Second):
					}
					ctxErr <- r.Context().Err()
				}
				_, _ = io.WriteString(w, "reviewed")
			})
			stopping := make(chan struct{})
			if tc.keep {
				review = keepThroughShutdown(stopping, review)
			}
			port, stop, stopped := startWebhookServer(t, review)
			client := http2Client()
			url := "https://127.0.0.1:" + strconv.Itoa(port) + "/validate"

			type answer struct {
				body  string
				proto int
				err   error
			}
			inFlight := make(chan answer, 1)
			go func() {
				body, proto, err := post(t.Context(), client, url)
				inFlight <- answer{body, proto, err}
			}()
			<-started
			close(stopping) // shutdownOnSignal's context ends first,
			stop()          // then the manager stops the webhook server.
			waitRefused(t, port)

			requireMovedOff(t, client, url)
			close(finish)
			got := <-inFlight
			if got.err != nil || got.body != "reviewed" || got.proto != 2 {
				t.Errorf("the review in flight: answer %q over HTTP/%d, error %v; want %q over HTTP/2", got.body, got.proto, got.err, "reviewed")
			}
			if err := <-ctxErr; !errors.Is(err, tc.wantCtxErr) {
				t.Errorf("the review's context at its end: %v, want %v", err, tc.wantCtxErr)
			}
			select {
			case err := <-stopped:
				if err != nil {
					t.Errorf("the webhook server's Start returned %v, want nil", err)
				}
			case <-time.After(10 * time.Second):
				t.Error("the webhook server did not stop after the review in flight ended")
			}
		})
	}
}

// requireMovedOff requires that a new request, during the drain, is soon
// refused: the client's HTTP/2 connection got a GOAWAY, so a new request
// needs a new connection, and the listener is closed. A request sent
// before the GOAWAY arrived is served on the draining connection, as a
// review in flight.
func requireMovedOff(t *testing.T, client *http.Client, url string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		body, _, err := post(t.Context(), client, url)
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			return
		case err != nil || body != "reviewed":
			t.Fatalf("a new request during the drain: answer %q, error %v; want it refused or answered", body, err)
		case time.Now().After(deadline):
			t.Fatal("new requests during the drain still reach the draining connection after 5 s: no GOAWAY")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startWebhookServer starts controller-runtime's webhook server on a free
// loopback port with a self-signed certificate, serving h at /validate.
// stop ends its context; stopped receives what Start returned.
func startWebhookServer(t *testing.T, h http.Handler) (port int, stop func(), stopped <-chan error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port = l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	srv := crwebhook.NewServer(crwebhook.Options{Host: "127.0.0.1", Port: port, CertDir: selfSignedCertDir(t), TLSOpts: []func(*tls.Config){secureTLS}})
	srv.Register("/validate", h)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(cancel)
	check := srv.StartedChecker()
	deadline := time.Now().Add(10 * time.Second)
	for check(nil) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("the webhook server did not start: %v", check(nil))
		}
		time.Sleep(10 * time.Millisecond)
	}
	return port, cancel, done
}

func http2Client() *http.Client {
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a test's self-signed certificate
		ForceAttemptHTTP2: true,
	}}
}

func post(ctx context.Context, c *http.Client, url string) (string, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return "", 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return string(body), resp.ProtoMajor, err
}

// waitRefused waits until the listener on port is closed.
func waitRefused(t *testing.T, port int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			return
		}
		_ = c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the webhook server still accepts connections 10 s after shutdown began")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func selfSignedCertDir(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, block := range map[string]*pem.Block{"tls.crt": {Type: "CERTIFICATE", Bytes: der}, "tls.key": {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
