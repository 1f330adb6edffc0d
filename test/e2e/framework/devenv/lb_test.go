package devenv

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// fakeReplica is a TCP server that greets each connection with its name,
// and a /readyz whose answer the test sets.
type fakeReplica struct {
	name     string
	listener net.Listener
	ready    atomic.Bool
	probe    *httptest.Server
}

func newFakeReplica(t *testing.T, name string) *fakeReplica {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeReplica{name: name, listener: l}
	f.ready.Store(true)
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(conn, f.name)
			_ = conn.Close()
		}
	}()
	f.probe = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !f.ready.Load() {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(func() { _ = l.Close(); f.probe.Close() })
	return f
}

func (f *fakeReplica) replica() *Replica {
	return &Replica{Port: f.listener.Addr().(*net.TCPAddr).Port, ReadyURL: f.probe.URL + "/readyz"}
}

// greeting connects through lb and returns what the replica said; "" when
// the load balancer closed the connection.
func greeting(t *testing.T, lb *LoadBalancer) string {
	t.Helper()
	conn, err := net.Dial("tcp", lb.listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, _ := io.ReadAll(conn)
	return string(got)
}

// waitReady waits until lb's readiness of every replica is want.
func waitReady(t *testing.T, lb *LoadBalancer, want ...bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		ok := true
		for i, w := range want {
			ok = ok && lb.Ready(i) == w
		}
		if ok {
			return
		}
		time.Sleep(ProbePeriod / 4)
	}
	t.Fatalf("the load balancer's readiness did not become %v", want)
}

func TestLoadBalancer(t *testing.T) {
	a, b := newFakeReplica(t, "a"), newFakeReplica(t, "b")
	port, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := newLoadBalancer(port[0], []*Replica{a.replica(), b.replica()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lb.Close() }()
	if lb.listener.Addr().String() != "127.0.0.1:"+strconv.Itoa(port[0]) {
		t.Fatalf("listens on %s, want port %d", lb.listener.Addr(), port[0])
	}
	waitReady(t, lb, true, true)

	// Both ready: new connections alternate.
	seen := map[string]int{}
	for range 4 {
		seen[greeting(t, lb)]++
	}
	if seen["a"] != 2 || seen["b"] != 2 {
		t.Errorf("4 connections with both ready went %v, want 2 to each", seen)
	}

	// b fails its probe: every new connection goes to a.
	b.ready.Store(false)
	waitReady(t, lb, true, false)
	for range 3 {
		if got := greeting(t, lb); got != "a" {
			t.Fatalf("with b not ready a connection went to %q, want a", got)
		}
	}

	// a stops listening before a probe saw it: the dial fails and the
	// connection goes to the next ready replica, b again ready.
	b.ready.Store(true)
	waitReady(t, lb, true, true)
	_ = a.listener.Close()
	before := lb.Stats()
	for range 2 {
		if got := greeting(t, lb); got != "b" {
			t.Fatalf("with a gone a connection went to %q, want b", got)
		}
	}
	if d := lb.Stats().Sub(before); d.DialFailures < 1 || d.NoReadyReplica != 0 {
		t.Errorf("after a stopped listening: %+v, want at least one dial failure redispatched and no connection dropped", d)
	}

	// None ready: the connection is closed at once and counted.
	a.ready.Store(false)
	b.ready.Store(false)
	waitReady(t, lb, false, false)
	before = lb.Stats()
	if got := greeting(t, lb); got != "" {
		t.Fatalf("with no replica ready a connection got %q, want it closed", got)
	}
	if d := lb.Stats().Sub(before); d.NoReadyReplica != 1 {
		t.Errorf("with no replica ready: %+v, want NoReadyReplica 1", d)
	}
}
