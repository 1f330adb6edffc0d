package ha_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// On SIGTERM a replica reports not ready at once, keeps serving for
// --shutdown-delay (the time a Service or load balancer needs to stop
// sending it connections), then stops accepting connections, finishes the
// review in flight and only then exits 0.
func TestGracefulShutdownDrainsTheReviewInFlight(t *testing.T) {
	w := framework.Webhook(t)
	r := w.Replicas()[0]
	t.Cleanup(func() {
		if err := r.Start(context.Background()); err != nil {
			t.Errorf("restarting replica 0: %v", err)
		}
	})
	body, err := os.ReadFile("testdata/review.json")
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig := clientTLS(t)
	addr := "127.0.0.1:" + strconv.Itoa(r.Port)

	// A review in flight: its headers and half its body are sent.
	inFlight, err := tls.Dial("tcp", addr, tlsConfig)
	if err != nil {
		t.Fatalf("connecting to replica 0: %v", err)
	}
	defer func() { _ = inFlight.Close() }()
	half := len(body) / 2
	fmt.Fprintf(inFlight, "POST /validate?timeout=30s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", addr, len(body))
	if _, err := inFlight.Write(body[:half]); err != nil {
		t.Fatal(err)
	}

	delay, err := time.ParseDuration(shutdownDelay)
	if err != nil {
		t.Fatal(err)
	}
	term := time.Now()
	if err := r.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Not ready at once, but still serving new connections.
	framework.Eventually(t, delay/2, "replica 0's /readyz to fail after SIGTERM", func(context.Context) (bool, error) {
		// controller-runtime's healthz answers a failed check with 500.
		return readyzStatus(r) == http.StatusInternalServerError, nil
	})
	// Answered, and told to go elsewhere next time (Connection: close).
	if code, closing, err := review(tlsConfig, addr, body); err != nil || code != http.StatusOK || !closing {
		t.Fatalf("a new review %s after SIGTERM, within --shutdown-delay: HTTP %d, Connection: close %t, %v; want 200 and close",
			time.Since(term).Round(time.Millisecond), code, closing, err)
	}
	// After the delay: no new connection, while the review in flight
	// keeps the process alive.
	framework.Eventually(t, delay+5*time.Second, "replica 0 to refuse new connections", func(context.Context) (bool, error) {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return true, nil
		}
		_ = conn.Close()
		return false, nil
	})
	if refused := time.Since(term); refused < delay {
		t.Errorf("replica 0 refused connections %s after SIGTERM, want not before --shutdown-delay %s", refused.Round(time.Millisecond), delay)
	}
	if !r.Running() {
		t.Fatalf("replica 0 exited with a review in flight")
	}

	// The rest of the body: the review is answered, then the process ends.
	if _, err := inFlight.Write(body[half:]); err != nil {
		t.Fatalf("sending the rest of the review in flight: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(inFlight), nil) //nolint:bodyclose // checkAnswer closes it
	if err != nil {
		t.Fatalf("reading the answer to the review in flight: %v", err)
	}
	answered := time.Now()
	checkAnswer(t, resp, body) // closes resp.Body
	select {
	case <-r.Exited():
	case <-time.After(10 * time.Second):
		t.Fatalf("replica 0 still runs 10s after it answered the last review in flight")
	}
	t.Logf("SIGTERM; not ready at once; serving for %s; then the review in flight answered %s after SIGTERM; exited %s later",
		delay, answered.Sub(term).Round(time.Millisecond), time.Since(answered).Round(time.Millisecond))
	if err := r.Terminate(time.Second); err != nil {
		t.Fatal(err)
	}
	if code := r.ExitCode(); code != 0 {
		t.Errorf("replica 0 exited %d, want 0", code)
	}
}

// clientTLS trusts the control plane's CA, which signs the replicas'
// certificate in file mode.
func clientTLS(t *testing.T) *tls.Config {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(framework.ControlPlane(t).CAPEM())
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
}

func readyzStatus(r *devenv.Replica) int {
	resp, err := http.Get(r.ReadyURL)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// review posts body on a new keep-alive connection and returns the HTTP
// status and whether the server closes the connection after it.
func review(tlsConfig *tls.Config, addr string, body []byte) (int, bool, error) {
	transport := &http.Transport{TLSClientConfig: tlsConfig}
	defer transport.CloseIdleConnections()
	client := &http.Client{Timeout: 5 * time.Second, Transport: transport}
	resp, err := client.Post("https://"+addr+"/validate?timeout=5s", "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, false, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, resp.Close, nil
}

// checkAnswer fails t unless resp is 200 with an AdmissionReview that
// answers the request in body.
func checkAnswer(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	defer func() { _ = resp.Body.Close() }()
	var sent, got admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatal(err)
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatalf("the answer to the review in flight (HTTP %d) is not an AdmissionReview: %v", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK || got.Response == nil || got.Response.UID != sent.Request.UID {
		t.Fatalf("the answer to the review in flight: HTTP %d, %+v; want 200 answering uid %s", resp.StatusCode, got.Response, sent.Request.UID)
	}
}
