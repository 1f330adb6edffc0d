package hatls_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

const clients = 8

// While 8 clients apply with failurePolicy Fail, replica 1 is killed, the
// certificate rotates twice with only replica 0 serving, replica 1 starts
// again and serves the Secret's current certificate, and the certificate
// rotates once more with both up. No apply fails, and every handshake, the
// API server's (in the replicas' logs) and the prober's (trusting the
// webhook configuration's caBundle of the moment), succeeds.
func TestRotationWithOneReplicaDown(t *testing.T) {
	f := framework.New(t)
	w := framework.Webhook(t)
	secrets := f.Client.CoreV1().Secrets(devenv.Namespace)
	down := w.Replicas()[1]
	t.Cleanup(func() {
		if err := down.Start(context.Background()); err != nil {
			t.Errorf("restarting replica 1: %v", err)
		}
	})

	startProbe, stopProbe := make(chan struct{}), make(chan struct{})
	p := &prober{client: f.Client, w: w}
	probed := make(chan struct{})
	go func() {
		defer close(probed)
		select {
		case <-startProbe:
			p.run(stopProbe)
		case <-stopProbe:
		}
	}()

	var rotationsDown, rotationsUp int
	// The clients go on past 480 applies until the third rotation: a
	// fast machine makes 480 before the first.
	loads := f.ApplyLoadUntil(t, clients, 480/clients, func(ctx context.Context) error {
		if err := down.Kill(); err != nil {
			return err
		}
		// The prober starts once the load balancer knows replica 1 is
		// gone: a handshake the kill itself cuts off is not a rotation's.
		if err := eventually(ctx, 5*time.Second, func() (bool, error) { return !w.LB().Ready(down.Index), nil }); err != nil {
			return err
		}
		close(startProbe)
		var err error
		if rotationsDown, err = waitRotations(ctx, secrets.Get, 2); err != nil {
			return err
		}
		if err := down.Start(ctx); err != nil {
			return err
		}
		// The restarted replica serves the Secret's certificate (a
		// renewal may promote a newer one meanwhile: read both again).
		if err := eventually(ctx, 5*time.Second, func() (bool, error) {
			sec, err := secrets.Get(ctx, devenv.TLSSecretName, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			leaf, err := servedLeaf("127.0.0.1:" + strconv.Itoa(down.Port))
			return err == nil && sameLeaf(leaf, secretLeaf(sec.Data)), nil
		}); err != nil {
			return fmt.Errorf("restarted replica 1 does not serve the Secret's certificate: %w", err)
		}
		rotationsUp, err = waitRotations(ctx, secrets.Get, 1)
		return err
	})
	close(stopProbe)
	<-probed

	failed := 0
	for _, l := range loads {
		failed += len(l.Failures)
		for _, fa := range l.Failures {
			t.Errorf("%s: an apply failed:\n%s", l.Name, fa.Stderr)
		}
		f.CheckApplied(t, l.Name, l.LastOK)
	}
	handshakes, failures := p.result()
	for _, fl := range failures {
		t.Errorf("prober handshake failed: %s", fl)
	}
	serverSide := handshakeErrors(t, w)
	for _, line := range serverSide {
		t.Errorf("a replica logged a failed handshake: %s", line)
	}
	t.Logf("%d applies, %d failed; %d rotations with replica 1 down, %d with both up; %d prober handshakes, %d failed; %d failed handshakes in the replicas' logs",
		framework.TotalApplies(loads), failed, rotationsDown, rotationsUp, handshakes, len(failures), len(serverSide))
}

// waitRotations waits until the Secret's serving certificate changed n
// times, and returns n; a rotation is due every ~20 s, so it fails after
// a minute and a half per rotation.
func waitRotations(ctx context.Context,
	get func(context.Context, string, metav1.GetOptions) (*corev1.Secret, error), n int) (int, error) {
	seen, last := 0, ""
	deadline := time.After(time.Duration(n) * 90 * time.Second)
	for seen < n {
		sec, err := get(ctx, devenv.TLSSecretName, metav1.GetOptions{})
		if err != nil {
			return seen, fmt.Errorf("reading the TLS Secret: %w", err)
		}
		cur := string(sec.Data["tls.crt"])
		if last != "" && cur != last {
			seen++
		}
		last = cur
		select {
		case <-deadline:
			return seen, fmt.Errorf("%d of %d rotations within %s", seen, n, time.Duration(n)*90*time.Second)
		case <-ctx.Done():
			return seen, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return seen, nil
}

func eventually(ctx context.Context, timeout time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s (last error: %w)", timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// handshakeErrors are the "TLS handshake error" lines of every replica's
// log: net/http logs each handshake a client failed.
func handshakeErrors(t *testing.T, w *devenv.Webhook) []string {
	t.Helper()
	var out []string
	for _, r := range w.Replicas() {
		data, err := os.ReadFile(r.LogPath)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			if strings.Contains(line, "TLS handshake error") {
				out = append(out, fmt.Sprintf("replica %d: %s", r.Index, line))
			}
		}
	}
	return out
}
