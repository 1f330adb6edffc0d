package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// Once shutdown began, every answer ends its connection: HTTP/1.1 by
// closing it after the answer, HTTP/2 by a GOAWAY; the client's next call
// opens a new connection (in a cluster, to another replica). Before, the
// connection is kept.
func TestCloseConnectionsOnceShuttingDown(t *testing.T) {
	for _, http2 := range []bool{false, true} {
		name := map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[http2]
		t.Run(name, func(t *testing.T) {
			gate := &readinessGate{}
			srv := httptest.NewUnstartedServer(closeConnectionsOnceShuttingDown(gate, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, "ok")
			})))
			var conns atomic.Int32
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			srv.EnableHTTP2 = http2
			srv.StartTLS()
			defer srv.Close()
			client := srv.Client()

			call := func() {
				t.Helper()
				resp, err := client.Post(srv.URL, "application/json", nil)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if (resp.ProtoMajor == 2) != http2 {
					t.Fatalf("answered over %s, want %s", resp.Proto, name)
				}
			}
			for range 3 {
				call()
			}
			if got := conns.Load(); got != 1 {
				t.Fatalf("before shutdown: 3 calls used %d connections, want 1 (kept alive)", got)
			}
			gate.Close()
			for i := range 3 {
				call()
				// The client learns of the close or the GOAWAY as the
				// answer arrives; give its reader a moment.
				time.Sleep(50 * time.Millisecond)
				if got, want := conns.Load(), int32(1+i); got != want {
					t.Fatalf("shutting down: after call %d, %d connections, want %d (each answer ends its connection)", i+1, got, want)
				}
			}
		})
	}
}
