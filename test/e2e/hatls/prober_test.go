package hatls_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// prober does what the API server does before each call: it trusts the
// caBundle of the validating webhook configuration as it is now, and
// completes a TLS handshake, every 100ms with each running replica and
// through the load balancer.
type prober struct {
	client kubernetes.Interface
	w      *devenv.Webhook

	mu         sync.Mutex
	handshakes int
	failures   []string
}

// run probes until stop is closed; a handshake under way when it closes
// is completed (a handshake cut off would be logged by the replica).
func (p *prober) run(stop <-chan struct{}) {
	ctx := context.Background()
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ticker.C:
		}
		hooks, err := p.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, devenv.Release, metav1.GetOptions{})
		if err != nil {
			continue // the API server is not what is probed
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(hooks.Webhooks[0].ClientConfig.CABundle)
		addrs := []string{"127.0.0.1:" + strconv.Itoa(p.w.Port)}
		for _, r := range p.w.Replicas() {
			if r.Running() {
				addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(r.Port))
			}
		}
		for _, addr := range addrs {
			p.handshake(ctx, pool, addr)
		}
	}
}

// handshake counts one handshake with addr; a replica that is not
// listening (killed or starting) is no handshake.
func (p *prober) handshake(ctx context.Context, pool *x509.CertPool, addr string) {
	// The API server's own limit: the webhook's timeoutSeconds.
	dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	var opErr *net.OpError
	if err != nil && errors.As(err, &opErr) && opErr.Op == "dial" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handshakes++
	if err != nil {
		p.failures = append(p.failures, fmt.Sprintf("%s %s: %v", time.Now().Format("15:04:05.000"), addr, err))
		return
	}
	_ = conn.Close()
}

func (p *prober) result() (int, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.handshakes, append([]string(nil), p.failures...)
}

// servedLeaf returns the certificate addr serves, without verifying it.
func servedLeaf(addr string) ([]byte, error) {
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) //nolint:gosec // only reads the served certificate
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	return conn.ConnectionState().PeerCertificates[0].Raw, nil
}

// secretLeaf returns the DER of the Secret's tls.crt (its first block).
func secretLeaf(data map[string][]byte) []byte {
	block, _ := pem.Decode(data["tls.crt"])
	if block == nil {
		return nil
	}
	return block.Bytes
}

func sameLeaf(a, b []byte) bool { return len(a) > 0 && bytes.Equal(a, b) }
