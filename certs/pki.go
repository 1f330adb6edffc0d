package certs

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"

	"github.com/cert-manager/cert-manager/pkg/util/pki"
)

// Keys of the Secret's data.
const (
	// CAKey holds the CA bundle: the current CA first, then the previous
	// one while it is still valid. It is what the webhook configurations
	// get as caBundle.
	CAKey = "ca.crt"
	// CertKey holds the PEM serving certificate.
	CertKey = "tls.crt"
	// KeyKey holds the PEM (PKCS#8) private key of the serving certificate.
	KeyKey = "tls.key"
	// NextCertKey holds, during a rotation, the new serving certificate
	// that no replica serves yet: it is signed by the first CA of the
	// bundle and becomes tls.crt once the bundle has had time to reach
	// every API server (see ServeNextAfterAnnotation).
	NextCertKey = "next.crt"
	// NextKeyKey holds the private key of next.crt.
	NextKeyKey = "next.key"
)

// clockSkew backdates NotBefore so that API servers whose clock lags a
// little still accept a new certificate.
const clockSkew = 5 * time.Minute

// material is the content of the Secret. Its String method keeps the key
// out of any log line or error message that formats it.
// nextCert and nextKey are set while a rotation is staged.
type material struct {
	caBundle []byte
	cert     []byte
	key      []byte
	nextCert []byte
	nextKey  []byte
}

func (m material) String() string { return "certs.material{…}" }

// staged reports whether m holds a next serving certificate.
func (m material) staged() bool { return len(m.nextCert) > 0 || len(m.nextKey) > 0 }

func (m material) data() map[string][]byte {
	d := map[string][]byte{CAKey: m.caBundle, CertKey: m.cert, KeyKey: m.key}
	if m.staged() {
		d[NextCertKey], d[NextKeyKey] = m.nextCert, m.nextKey
	}
	return d
}

// generate makes a new CA and a serving certificate for hosts signed by
// it, both valid from now for validity. previous, if not nil, is appended
// to the CA bundle.
func generate(hosts []string, now time.Time, validity time.Duration, previous *x509.Certificate) (material, error) {
	caKey, err := pki.GenerateECPrivateKey(pki.ECCurve256)
	if err != nil {
		return material{}, fmt.Errorf("generating the CA key: %w", err)
	}
	caTemplate, err := template("apply-hygiene-webhook-ca", now, validity)
	if err != nil {
		return material{}, err
	}
	caTemplate.IsCA = true
	caTemplate.BasicConstraintsValid = true
	caTemplate.MaxPathLenZero = true
	caTemplate.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	caPEM, caCert, err := pki.SignCertificate(caTemplate, caTemplate, caKey.Public(), caKey)
	if err != nil {
		return material{}, fmt.Errorf("signing the CA certificate: %w", err)
	}
	key, err := pki.GenerateECPrivateKey(pki.ECCurve256)
	if err != nil {
		return material{}, fmt.Errorf("generating the serving key: %w", err)
	}
	leaf, err := template(hosts[0], now, validity)
	if err != nil {
		return material{}, err
	}
	leaf.KeyUsage = x509.KeyUsageDigitalSignature
	leaf.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	leaf.BasicConstraintsValid = true
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			leaf.IPAddresses = append(leaf.IPAddresses, ip)
		} else {
			leaf.DNSNames = append(leaf.DNSNames, h)
		}
	}
	certPEM, _, err := pki.SignCertificate(leaf, caCert, key.Public(), caKey)
	if err != nil {
		return material{}, fmt.Errorf("signing the serving certificate: %w", err)
	}
	keyPEM, err := pki.EncodePKCS8PrivateKey(key)
	if err != nil {
		return material{}, fmt.Errorf("encoding the serving key: %w", err)
	}
	bundle := caPEM
	if previous != nil {
		prev, err := pki.EncodeX509(previous)
		if err != nil {
			return material{}, fmt.Errorf("encoding the previous CA: %w", err)
		}
		bundle = append(bytes.Clone(caPEM), prev...)
	}
	return material{caBundle: bundle, cert: certPEM, key: keyPEM}, nil
}

// template is a certificate template for commonName with a random serial
// number, valid from now (less clockSkew) for validity.
func template(commonName string, now time.Time, validity time.Duration) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("generating a serial number: %w", err)
	}
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    now.Add(-clockSkew),
		NotAfter:     now.Add(validity),
	}, nil
}

// parsed is material decoded: the CAs of the bundle, the serving
// certificate and its key.
type parsed struct {
	cas  []*x509.Certificate
	leaf *x509.Certificate
	key  crypto.Signer
}

// parse decodes the Secret's data: the bundle and the served key pair.
// Its errors never quote the data. The returned material also holds the
// staged next key pair, undecoded (parseNext decodes it).
func parse(data map[string][]byte) (material, parsed, error) {
	m := material{caBundle: data[CAKey], cert: data[CertKey], key: data[KeyKey],
		nextCert: data[NextCertKey], nextKey: data[NextKeyKey]}
	var p parsed
	var err error
	if p.cas, err = pki.DecodeX509CertificateSetBytes(m.caBundle); err != nil {
		return m, p, fmt.Errorf("decoding %s: %w", CAKey, err)
	}
	p.leaf, p.key, err = parsePair(m.cert, m.key, CertKey, KeyKey)
	return m, p, err
}

// parseNext decodes the staged key pair of m, with the bundle's CAs.
func parseNext(m material, cas []*x509.Certificate) (parsed, error) {
	leaf, key, err := parsePair(m.nextCert, m.nextKey, NextCertKey, NextKeyKey)
	return parsed{cas: cas, leaf: leaf, key: key}, err
}

// parsePair decodes a PEM certificate and its PEM private key; the errors
// name the Secret's keys, never the data.
func parsePair(cert, key []byte, certName, keyName string) (*x509.Certificate, crypto.Signer, error) {
	leaf, err := pki.DecodeX509CertificateBytes(cert)
	if err != nil {
		return nil, nil, fmt.Errorf("decoding %s: %w", certName, err)
	}
	signer, err := pki.DecodePrivateKeyBytes(key)
	if err != nil {
		return nil, nil, errors.New("decoding " + keyName + ": not a PEM private key")
	}
	return leaf, signer, nil
}

// check reports why p must be regenerated, or nil when it is fit for use
// at now for hosts until at least now+renewBefore: its leaf is signed by
// the first CA of the bundle and neither expires within renewBefore.
func (p parsed) check(hosts []string, now time.Time, renewBefore time.Duration) error {
	if len(p.cas) == 0 {
		return errors.New(CAKey + " holds no certificate")
	}
	if err := p.usable(hosts, now, p.cas[:1]); err != nil {
		return err
	}
	deadline := now.Add(renewBefore)
	for _, c := range []*x509.Certificate{p.cas[0], p.leaf} {
		if !deadline.Before(c.NotAfter) {
			return fmt.Errorf("%q expires at %s, within the renewal period", c.Subject.CommonName, c.NotAfter.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

// usable reports why the API server would refuse p's leaf at now for one
// of hosts when it trusts cas, or nil when it would accept it.
func (p parsed) usable(hosts []string, now time.Time, cas []*x509.Certificate) error {
	match, err := pki.PublicKeyMatchesCertificate(p.key.Public(), p.leaf)
	if err != nil || !match {
		return errors.New("the private key does not match the certificate")
	}
	roots := x509.NewCertPool()
	for _, ca := range cas {
		roots.AddCert(ca)
	}
	for _, h := range hosts {
		_, err := p.leaf.Verify(x509.VerifyOptions{DNSName: h, Roots: roots, CurrentTime: now})
		if err != nil {
			return fmt.Errorf("serving certificate not valid for %q: %w", h, err)
		}
	}
	return nil
}

// signer is the CA of the bundle that signed p's leaf, or nil.
func (p parsed) signer() *x509.Certificate {
	for _, ca := range p.cas {
		if p.leaf.CheckSignatureFrom(ca) == nil {
			return ca
		}
	}
	return nil
}

// previousCA is the CA of p to keep trusting after a rotation: the current
// one if it is still valid at now.
func previousCA(p parsed, now time.Time) *x509.Certificate {
	if len(p.cas) == 0 || !now.Before(p.cas[0].NotAfter) {
		return nil
	}
	return p.cas[0]
}
