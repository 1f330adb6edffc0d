package devenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// ProbePeriod is how often the LoadBalancer probes each replica's /readyz.
const ProbePeriod = 200 * time.Millisecond

// LoadBalancer is the local stand-in for the webhook's Service: a loopback
// TCP proxy that sends each new connection to the next replica, round
// robin, among those whose /readyz passed at the last probe. Like a
// Service it balances connections, not requests: the API server keeps its
// HTTP/2 connection on one replica until that connection ends.
//
// It is written by hand because it must be tiny, dependency-free and
// observable (Stats); no maintained Go library is a probing TCP proxy.
//
// Where it differs from a Service (docs/reliability.md, section 3.1): it
// probes every ProbePeriod, and a failed or refused probe takes a replica
// out at once, where a Service follows the kubelet (a crashed container is
// NotReady within about a second, a deleted Pod is terminating at once);
// and when a dial fails it tries the next ready replica, as HAProxy's
// redispatch or Envoy's connect retries do, where kube-proxy's iptables
// rules would fail that one connection.
type LoadBalancer struct {
	listener  net.Listener
	backends  []*backend
	next      atomic.Uint64
	dialFails atomic.Int64
	noBackend atomic.Int64
	cutOff    atomic.Int64
	wg        sync.WaitGroup
	stop      context.CancelFunc
}

// backend is one replica as the LoadBalancer sees it.
type backend struct {
	addr     string
	readyURL string
	ready    atomic.Bool
	conns    atomic.Int64
}

// LoadBalancerStats are the LoadBalancer's counts since it started.
type LoadBalancerStats struct {
	// Connections is the number of connections sent to each replica.
	Connections []int64
	// DialFailures counts dials to a replica that failed (the connection
	// then went to the next ready replica).
	DialFailures int64
	// NoReadyReplica counts connections closed at once because no replica
	// was ready or none could be dialed.
	NoReadyReplica int64
	// CutOff counts connections a replica closed after the client had
	// sent bytes that it had not answered yet: an indication of calls in
	// flight when a replica died, not a count of them (one HTTP/2
	// connection carries several calls, and an answer to one clears the
	// mark; HTTP/2 control frames set it).
	CutOff int64
}

// Sub returns the counts of s since earlier.
func (s LoadBalancerStats) Sub(earlier LoadBalancerStats) LoadBalancerStats {
	d := LoadBalancerStats{DialFailures: s.DialFailures - earlier.DialFailures,
		NoReadyReplica: s.NoReadyReplica - earlier.NoReadyReplica, CutOff: s.CutOff - earlier.CutOff}
	for i, n := range s.Connections {
		if i < len(earlier.Connections) {
			n -= earlier.Connections[i]
		}
		d.Connections = append(d.Connections, n)
	}
	return d
}

// newLoadBalancer listens on 127.0.0.1:port and serves until Close.
// replicas are the replicas' webhook addresses and readiness URLs.
func newLoadBalancer(port int, replicas []*Replica) (*LoadBalancer, error) {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, fmt.Errorf("listening for the load balancer: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	lb := &LoadBalancer{listener: l, stop: cancel}
	for _, r := range replicas {
		lb.backends = append(lb.backends, &backend{addr: fmt.Sprintf("127.0.0.1:%d", r.Port), readyURL: r.ReadyURL})
	}
	lb.wg.Add(2)
	go func() { defer lb.wg.Done(); lb.probe(ctx) }()
	go func() { defer lb.wg.Done(); lb.serve(ctx) }()
	return lb, nil
}

// Stats returns the counts so far.
func (lb *LoadBalancer) Stats() LoadBalancerStats {
	s := LoadBalancerStats{DialFailures: lb.dialFails.Load(), NoReadyReplica: lb.noBackend.Load(), CutOff: lb.cutOff.Load()}
	for _, b := range lb.backends {
		s.Connections = append(s.Connections, b.conns.Load())
	}
	return s
}

// Ready reports whether replica i passed its last probe.
func (lb *LoadBalancer) Ready(i int) bool { return lb.backends[i].ready.Load() }

// Close stops accepting, closes the proxied connections and waits for the
// probes to end.
func (lb *LoadBalancer) Close() error {
	lb.stop()
	err := lb.listener.Close()
	lb.wg.Wait()
	return err
}

// probe sets each backend's readiness from its /readyz, every
// ProbePeriod, until ctx ends. An answer other than 200, or a refused
// connection, takes a backend out at once (a replica shutting down or
// gone); a probe that times out only after probeFailureThreshold in a row,
// as a kubelet's failureThreshold does: a busy replica is not a dead one.
func (lb *LoadBalancer) probe(ctx context.Context) {
	client := &http.Client{Timeout: probeTimeout}
	timeouts := make([]int, len(lb.backends))
	ticker := time.NewTicker(ProbePeriod)
	defer ticker.Stop()
	for {
		for i, b := range lb.backends {
			switch probeReady(ctx, client, b.readyURL) {
			case probePassed:
				timeouts[i] = 0
				b.ready.Store(true)
			case probeFailed:
				timeouts[i] = 0
				b.ready.Store(false)
			case probeTimedOut:
				if timeouts[i]++; timeouts[i] >= probeFailureThreshold {
					b.ready.Store(false)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

const (
	probeTimeout          = time.Second
	probeFailureThreshold = 3
)

type probeResult int

const (
	probePassed probeResult = iota
	probeFailed
	probeTimedOut
)

func probeReady(ctx context.Context, client *http.Client, url string) probeResult {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return probeFailed
	}
	resp, err := client.Do(req)
	var netErr net.Error
	switch {
	case errors.As(err, &netErr) && netErr.Timeout():
		return probeTimedOut
	case err != nil:
		return probeFailed
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return probeFailed
	}
	return probePassed
}

// serve accepts connections until the listener closes.
func (lb *LoadBalancer) serve(ctx context.Context) {
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		client, err := lb.listener.Accept()
		if err != nil {
			return
		}
		conns.Go(func() { lb.proxy(ctx, client) })
	}
}

// proxy connects client to a ready backend and copies both ways until
// either side ends; then it closes both, so that a replica's death reaches
// the client as it would through a Service.
func (lb *LoadBalancer) proxy(ctx context.Context, client net.Conn) {
	defer func() { _ = client.Close() }()
	server, b := lb.dial(ctx)
	if server == nil {
		lb.noBackend.Add(1)
		return
	}
	b.conns.Add(1)
	defer func() { _ = server.Close() }()
	// pending: the client sent bytes the server has not answered yet.
	var pending atomic.Bool
	toServer, toClient := make(chan struct{}), make(chan struct{})
	go func() { defer close(toServer); relay(server, client, func() { pending.Store(true) }) }()
	go func() { defer close(toClient); relay(client, server, func() { pending.Store(false) }) }()
	select {
	case <-toServer:
	case <-toClient:
		if pending.Load() {
			lb.cutOff.Add(1)
		}
	case <-ctx.Done():
	}
	// Closing both ends the other relay.
	_ = client.Close()
	_ = server.Close()
	<-toServer
	<-toClient
}

// relay copies src to dst until either fails, calling sent after each
// chunk written.
func relay(dst, src net.Conn, sent func()) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
			sent()
		}
		if err != nil {
			return
		}
	}
}

// dial returns a connection to the next ready backend, trying each ready
// one once; a backend that refuses is marked not ready until its next
// probe passes.
func (lb *LoadBalancer) dial(ctx context.Context) (net.Conn, *backend) {
	start := lb.next.Add(1)
	dialer := net.Dialer{Timeout: time.Second}
	for i := range len(lb.backends) {
		b := lb.backends[(int(start)+i)%len(lb.backends)]
		if !b.ready.Load() {
			continue
		}
		conn, err := dialer.DialContext(ctx, "tcp", b.addr)
		if err == nil {
			return conn, b
		}
		if !errors.Is(err, context.Canceled) {
			lb.dialFails.Add(1)
			b.ready.Store(false)
		}
	}
	return nil, nil
}
