package failures_test

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// slowProxy forwards TCP connections to the API server unchanged (TLS
// passes through: the API server's certificate covers 127.0.0.1) and,
// while slowed, holds every chunk the API server sends back for a while
// before passing it on. Each chunk waits for its own delay from its
// arrival, in order, so delays do not add up across chunks and a chunk
// that arrives after Slow's restore waits only for those before it.
type slowProxy struct {
	ln       net.Listener
	upstream string
	delay    atomic.Int64 // nanoseconds; 0 forwards at once
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	wg       sync.WaitGroup
}

// startSlowProxy listens on a loopback port and forwards to the host of
// apiServerURL.
func startSlowProxy(apiServerURL string) (*slowProxy, error) {
	u, err := url.Parse(apiServerURL)
	if err != nil {
		return nil, fmt.Errorf("parsing the API server's URL %q: %w", apiServerURL, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the API server proxy: %w", err)
	}
	p := &slowProxy{ln: ln, upstream: u.Host, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// URL is the proxy's address as an API server URL.
func (p *slowProxy) URL() string { return "https://" + p.ln.Addr().String() }

// Slow holds every chunk from the API server for d until the returned
// function is called; that function returns once the chunks held so far
// are through.
func (p *slowProxy) Slow(d time.Duration) (restore func()) {
	p.delay.Store(int64(d))
	return func() {
		p.delay.Store(0)
		time.Sleep(d)
	}
}

// Close stops accepting and cuts every forwarded connection.
func (p *slowProxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *slowProxy) serve() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.forward(client)
		}()
	}
}

// forward connects client with the API server until either side ends.
func (p *slowProxy) forward(client net.Conn) {
	server, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
	if err != nil {
		_ = client.Close()
		return
	}
	if !p.track(client, server) {
		return
	}
	defer p.untrack(client, server)
	done := make(chan struct{}, 2)
	go func() { copyDelayed(server, client, func() time.Duration { return 0 }); done <- struct{}{} }()
	go func() {
		copyDelayed(client, server, func() time.Duration { return time.Duration(p.delay.Load()) })
		done <- struct{}{}
	}()
	<-done
	_ = client.Close()
	_ = server.Close()
	<-done
}

// track records the pair for Close; false when the proxy is closed.
func (p *slowProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *slowProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		if p.conns == nil {
			return
		}
		delete(p.conns, c)
	}
}

// copyDelayed copies src to dst; each chunk read is written delay() after
// it was read (delay is asked at reading), in order.
func copyDelayed(dst io.Writer, src io.Reader, delay func() time.Duration) {
	type chunk struct {
		data []byte
		due  time.Time
	}
	chunks := make(chan chunk, 1024)
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				chunks <- chunk{data: buf[:n], due: time.Now().Add(delay())}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range chunks {
		time.Sleep(time.Until(c.due))
		if _, err := dst.Write(c.data); err != nil {
			break
		}
	}
	for range chunks { // let the reader end once its source is closed
	}
}
