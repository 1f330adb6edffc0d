package certs

import (
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// world is a cluster of replicas sharing one fake API server and one fake
// clock. It names every CA and serving certificate it sees (CA0, L0, CA1,
// L1, … in order of appearance) and remembers the caBundles the webhook
// configurations held, so that tests can say what is served in words and
// check that no handshake could fail.
type world struct {
	t        *testing.T
	client   *fake.Clientset
	opts     Options
	now      time.Time
	replicas []*replica
	names    map[string]string
	cas      int
	leaves   int
	// bundles are the caBundles the configurations held, each with the
	// time it was replaced (zero for the current ones).
	bundles []heldBundle
}

type replica struct {
	m   *Manager
	dir string
	up  bool
}

type heldBundle struct {
	pem      []byte
	replaced time.Time
}

var secretsResource = corev1.SchemeGroupVersion.WithResource("secrets")

// newWorld starts n replicas' worth of world (none has run Ensure yet)
// with objs in the API server.
func newWorld(t *testing.T, n int, objs ...runtime.Object) *world {
	t.Helper()
	w := &world{t: t, client: fake.NewClientset(objs...), opts: testOptions(t), now: testNow, names: map[string]string{}}
	w.opts.Now = func() time.Time { return w.now }
	opts, err := w.opts.withDefaults()
	if err != nil {
		t.Fatalf("options: %v", err)
	}
	if opts.PublishDelay != time.Minute {
		t.Fatalf("the default PublishDelay is %s, the table assumes 1m", opts.PublishDelay)
	}
	w.opts = opts
	withResourceVersions(w.client)
	for range n {
		w.replicas = append(w.replicas, &replica{up: true})
		w.restart(len(w.replicas) - 1)
	}
	return w
}

// withResourceVersions makes the fake API server refuse a Secret update
// whose resourceVersion is not the stored one, as a real one does.
func withResourceVersions(client *fake.Clientset) {
	var mu sync.Mutex
	client.PrependReactor("update", "secrets", func(a clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		sec := a.(clienttesting.UpdateAction).GetObject().(*corev1.Secret).DeepCopy()
		cur, err := client.Tracker().Get(secretsResource, sec.Namespace, sec.Name)
		if err != nil {
			return true, nil, err
		}
		rv := cur.(*corev1.Secret).ResourceVersion
		if sec.ResourceVersion != rv {
			return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "secrets"}, sec.Name, fmt.Errorf("resourceVersion %q is not %q", sec.ResourceVersion, rv))
		}
		n, _ := strconv.Atoi(rv)
		sec.ResourceVersion = strconv.Itoa(n + 1)
		if err := client.Tracker().Update(secretsResource, sec, sec.Namespace); err != nil {
			return true, nil, err
		}
		return true, sec, nil
	})
}

// restart gives replica i a new process: a new Manager and an empty
// certificate directory (a new pod), up but not yet ensured.
func (w *world) restart(i int) {
	w.t.Helper()
	opts := w.opts
	opts.CertDir = filepath.Join(w.t.TempDir(), "tls")
	m, err := NewManager(w.client, opts)
	if err != nil {
		w.t.Fatalf("NewManager: %v", err)
	}
	w.replicas[i] = &replica{m: m, dir: opts.CertDir, up: true}
}

// ensure runs one Ensure of each replica in which, concurrently when
// there are several, and records what the configurations hold.
func (w *world) ensure(which ...int) {
	w.t.Helper()
	errs := make([]error, len(which))
	var wg sync.WaitGroup
	for k, i := range which {
		wg.Go(func() { errs[k] = w.replicas[i].m.Ensure(w.t.Context()) })
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			w.t.Fatalf("replica %d: Ensure: %v", which[k], err)
		}
	}
	w.observe()
}

// observe records the configurations' bundles and names new certificates.
func (w *world) observe() {
	w.t.Helper()
	s := readState(w.t, w.client, w.t.TempDir())
	current := map[string]bool{}
	for _, b := range append(append([][]byte{}, s.mutating...), s.validating...) {
		current[string(b)] = true
	}
	for i := range w.bundles {
		b := &w.bundles[i]
		switch {
		case !b.replaced.IsZero():
		case current[string(b.pem)]:
			delete(current, string(b.pem))
		default:
			b.replaced = w.now
		}
	}
	for b := range current {
		w.bundles = append(w.bundles, heldBundle{pem: []byte(b)})
	}
	for _, ca := range w.bundleCerts(s.secret.Data[CAKey]) {
		w.name(ca, "CA")
	}
	for _, key := range []string{CertKey, NextCertKey} {
		if pem := s.secret.Data[key]; len(pem) > 0 {
			w.name(mustCerts(w.t, pem)[0], "L")
		}
	}
}

func (w *world) bundleCerts(pem []byte) []*x509.Certificate {
	w.t.Helper()
	return mustCerts(w.t, pem)
}

// name returns c's name, naming it when new.
func (w *world) name(c *x509.Certificate, kind string) string {
	if n, ok := w.names[string(c.Raw)]; ok {
		return n
	}
	var n string
	if kind == "CA" {
		n, w.cas = fmt.Sprintf("CA%d", w.cas), w.cas+1
	} else {
		n, w.leaves = fmt.Sprintf("L%d", w.leaves), w.leaves+1
	}
	w.names[string(c.Raw)] = n
	return n
}

// served names the certificate in each replica's directory ("" when down
// or when it has none).
func (w *world) served() []string {
	w.t.Helper()
	out := make([]string, len(w.replicas))
	for i, r := range w.replicas {
		if !r.up {
			continue
		}
		pem, err := os.ReadFile(filepath.Join(r.dir, CertKey))
		if err != nil {
			continue
		}
		out[i] = w.name(mustCerts(w.t, pem)[0], "L")
	}
	return out
}

// assertNoHandshakeFails is the invariant of the rotation: every
// certificate a running replica serves verifies, for every host, against
// every caBundle an API server may still use now: the ones in the
// configurations, and (strict) the ones replaced less than PublishDelay
// ago, which an API server's informer may not have dropped yet. strict is
// false only after an outage, when the old certificate had expired and
// nothing could be protected.
func (w *world) assertNoHandshakeFails(strict bool) {
	w.t.Helper()
	for i, r := range w.replicas {
		if !r.up {
			continue
		}
		pem, err := os.ReadFile(filepath.Join(r.dir, CertKey))
		if err != nil {
			continue // not ready: the webhook server has not started
		}
		leaf := mustCerts(w.t, pem)[0]
		for _, b := range w.bundles {
			stale := !b.replaced.IsZero()
			if stale && (!strict || !b.replaced.After(w.now.Add(-w.opts.PublishDelay))) {
				continue
			}
			roots := x509.NewCertPool()
			roots.AppendCertsFromPEM(b.pem)
			for _, h := range w.opts.hosts() {
				if _, err := leaf.Verify(x509.VerifyOptions{DNSName: h, Roots: roots, CurrentTime: w.now}); err != nil {
					w.t.Errorf("at %s replica %d serves %s, which an API server trusting %v (stale: %t) refuses for %s: %v",
						w.now.Sub(testNow), i, w.name(leaf, "L"), w.bundleNames(b.pem), stale, h, err)
				}
			}
		}
	}
}

func (w *world) bundleNames(pem []byte) []string {
	var out []string
	for _, c := range w.bundleCerts(pem) {
		out = append(out, w.name(c, "CA"))
	}
	return out
}
