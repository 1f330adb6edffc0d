package controlplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certValidity is long enough for any test run or development session.
const certValidity = 7 * 24 * time.Hour

// authority is the control plane's CA: it signs the API server's serving
// certificate and every client certificate, and the API server trusts it as
// --client-ca-file. The standard library is enough for a throwaway
// development CA; the product's own certificates live in package certs.
type authority struct {
	cert *x509.Certificate
	key  crypto.Signer
	pem  []byte
}

func newAuthority() (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "apply-hygiene-dev-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("signing CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing CA certificate: %w", err)
	}
	return &authority{cert: cert, key: key, pem: encodeCert(der)}, nil
}

// keyPair is a PEM-encoded certificate and private key.
type keyPair struct {
	certPEM []byte
	keyPEM  []byte
}

// issue signs a leaf certificate. A client certificate carries the user name
// as CommonName and the groups as Organization, which is how the API server's
// x509 authenticator reads them.
func (a *authority) issue(cn string, groups []string, ips []net.IP, dnsNames []string) (*keyPair, error) {
	return a.issueFor(cn, groups, ips, dnsNames, time.Now().Add(-time.Hour), time.Now().Add(certValidity))
}

// issueFor is issue with a chosen validity window.
func (a *authority) issueFor(cn string, groups []string, ips []net.IP, dnsNames []string, notBefore, notAfter time.Time) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating key for %q: %w", cn, err)
	}
	usage := x509.ExtKeyUsageClientAuth
	if len(ips)+len(dnsNames) > 0 {
		usage = x509.ExtKeyUsageServerAuth
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: groups},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		IPAddresses:  ips,
		DNSNames:     dnsNames,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, key.Public(), a.key)
	if err != nil {
		return nil, fmt.Errorf("signing certificate for %q: %w", cn, err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	return &keyPair{certPEM: encodeCert(der), keyPEM: keyPEM}, nil
}

// write stores the pair as dir/name.crt and dir/name.key.
func (p *keyPair) write(dir, name string) (certFile, keyFile string, err error) {
	certFile = filepath.Join(dir, name+".crt")
	keyFile = filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, p.certPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("writing %s: %w", certFile, err)
	}
	if err := os.WriteFile(keyFile, p.keyPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("writing %s: %w", keyFile, err)
	}
	return certFile, keyFile, nil
}

// writeSigningKey writes the key pair the API server signs and verifies
// service account tokens with.
func writeSigningKey(dir string) (privFile, pubFile string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("generating service account key: %w", err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return "", "", err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return "", "", fmt.Errorf("encoding service account public key: %w", err)
	}
	privFile = filepath.Join(dir, "sa.key")
	pubFile = filepath.Join(dir, "sa.pub")
	if err := os.WriteFile(privFile, keyPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("writing %s: %w", privFile, err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	if err := os.WriteFile(pubFile, pubPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("writing %s: %w", pubFile, err)
	}
	return privFile, pubFile, nil
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		// crypto/rand does not fail on Linux; a fixed serial would still
		// produce valid, if indistinct, certificates.
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

func writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
