package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// selfSigned is a CA made in-process and a serving certificate it signed
// for the loopback addresses; the references of -peer all serve it.
type selfSigned struct {
	caPEM []byte
	cert  tls.Certificate
}

// newSelfSigned makes a CA and a serving certificate valid for a day.
func newSelfSigned() (*selfSigned, error) {
	now := time.Now()
	ca := validForADay(1, "hack/load CA", now)
	ca.KeyUsage, ca.BasicConstraintsValid, ca.IsCA = x509.KeyUsageCertSign, true, true
	caDER, caKey, err := issue(ca, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("making the CA: %w", err)
	}
	leaf := validForADay(2, "127.0.0.1", now)
	leaf.KeyUsage, leaf.ExtKeyUsage = x509.KeyUsageDigitalSignature, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	leaf.DNSNames, leaf.IPAddresses = []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	leafDER, key, err := issue(leaf, ca, caKey)
	if err != nil {
		return nil, fmt.Errorf("making the serving certificate: %w", err)
	}
	return &selfSigned{
		caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		cert:  tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key},
	}, nil
}

// validForADay is a certificate template from a minute before now to a
// day after it.
func validForADay(serial int64, commonName string, now time.Time) *x509.Certificate {
	return &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: commonName},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(24 * time.Hour)}
}

// issue makes a P-256 key and the certificate of template for it, signed
// by parent's key, or by itself when parent is nil.
func issue(template, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) ([]byte, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating the key: %w", err)
	}
	if parent == nil {
		parent, parentKey = template, key
	}
	der, err := x509.CreateCertificate(rand.Reader, template, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, fmt.Errorf("signing: %w", err)
	}
	return der, key, nil
}

// serverTLS is the TLS the references serve: 1.2 at least, as the
// server's own (cmd/apply-hygiene secureTLS); the client offers 1.3.
func (s *selfSigned) serverTLS(c *tls.Config) {
	c.MinVersion = tls.VersionTLS12
	c.Certificates = nil
	c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &s.cert, nil }
}
