package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// reference is one server of the side-by-side measure.
type reference struct {
	name string
	url  string
}

// The references, in the order each round loads them.
const (
	uidOnlyName = "no-op, reads the uid only"
	floorName   = "no-op, decodes the review (floor)"
	peerName    = "OPA + hand-written Rego (peer)"
	hygieneName = "apply-hygiene `/validate`"
)

// references are the four servers of -peer, each on its own loopback
// port, all serving one certificate of an in-process CA.
type references struct {
	caPEM   []byte
	servers []reference
	stop    func() error
}

// startReferences starts the no-op servers, the peer and apply-hygiene;
// stop ends them all.
func startReferences(ctx context.Context, reviews []review, shadowVerify bool) (*references, error) {
	certs, err := newSelfSigned()
	if err != nil {
		return nil, err
	}
	p, err := newPeer(ctx)
	if err != nil {
		return nil, err
	}
	refs := &references{caPEM: certs.caPEM}
	var stops []func() error
	refs.stop = func() error {
		var errs []error
		for _, stop := range stops {
			errs = append(errs, stop())
		}
		return errors.Join(errs...)
	}
	for _, s := range []struct {
		name string
		h    http.Handler
	}{{uidOnlyName, http.HandlerFunc(uidOnly)}, {floorName, http.HandlerFunc(floor)}, {peerName, p}} {
		url, stop, err := serveHTTPS(ctx, certs, s.h)
		if err != nil {
			return nil, errors.Join(err, refs.stop())
		}
		stops = append(stops, stop)
		refs.servers = append(refs.servers, reference{name: s.name, url: url})
	}
	hctx, cancel := context.WithCancel(ctx)
	url, done, err := startHygiene(hctx, certs, reviews, shadowVerify)
	if err != nil {
		cancel()
		return nil, errors.Join(err, refs.stop())
	}
	stops = append(stops, func() error { cancel(); return <-done })
	refs.servers = append(refs.servers, reference{name: hygieneName, url: url})
	return refs, nil
}

// serveHTTPS serves h on a free loopback port with keep-alive and TLS 1.2
// or later.
func serveHTTPS(ctx context.Context, certs *selfSigned, h http.Handler) (url string, stop func() error, err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("listening: %w", err)
	}
	cfg := &tls.Config{NextProtos: []string{"http/1.1"}}
	certs.serverTLS(cfg)
	srv := &http.Server{Handler: h, TLSConfig: cfg, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(tls.NewListener(l, cfg)) }()
	stop = func() error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(ctx)
		if serveErr := <-errc; !errors.Is(serveErr, http.ErrServerClosed) {
			err = errors.Join(err, serveErr)
		}
		return err
	}
	return "https://" + l.Addr().String() + "/", stop, nil
}
