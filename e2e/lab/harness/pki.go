package harness

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
	"os"
	"path/filepath"
	"time"
)

// PKI is the lab's certificate authority and one server certificate it signed, valid for every
// address of the lab's /24 that serves TLS (registries, BMCs, ISO server, Git) and for 127.0.0.1.
// Both are kept in <lab>/pki so a lab dir keeps its CA across starts (a changed CA would change
// every stage's input fingerprint).
type PKI struct {
	// CAFile is the PEM of the CA; profiles point caFile fields at it.
	CAFile string
	// CertFile and KeyFile are the server certificate (chain: leaf, CA) and its key.
	CertFile, KeyFile string
}

// pkiHosts are the lab hosts that serve TLS.
var pkiHosts = []byte{1, 60, 61, 62, 70, 100, 101, 102, 103, 104, 105, 106, 107}

// LoadOrCreatePKI returns the lab's PKI, creating it on first use.
func LoadOrCreatePKI(l *Lab) (*PKI, error) {
	dir := filepath.Join(l.Dir, "pki")
	p := &PKI{CAFile: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, "server.pem"), KeyFile: filepath.Join(dir, "server-key.pem")}
	if _, err := tls.LoadX509KeyPair(p.CertFile, p.KeyFile); err == nil {
		if _, err := os.Stat(p.CAFile); err == nil {
			return p, nil
		}
	} // missing or damaged: a new CA (the profile's CA files change with it)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var ips []net.IP
	for _, h := range pkiHosts {
		ips = append(ips, net.IP(l.IP(h).AsSlice()))
	}
	ips = append(ips, net.IPv4(127, 0, 0, 1), net.IPv6loopback)
	caPEM, certPEM, keyPEM, err := newChain(ips)
	if err != nil {
		return nil, fmt.Errorf("lab: pki: %w", err)
	}
	for _, f := range []struct {
		path string
		b    []byte
		mode os.FileMode
	}{{p.CAFile, caPEM, 0o644}, {p.CertFile, append(certPEM, caPEM...), 0o644}, {p.KeyFile, keyPEM, 0o600}} {
		if err := os.WriteFile(f.path, f.b, f.mode); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// TLS returns the server certificate as a tls.Certificate.
func (p *PKI) TLS() (tls.Certificate, error) { return tls.LoadX509KeyPair(p.CertFile, p.KeyFile) }

// CAPEM returns the CA certificate.
func (p *PKI) CAPEM() ([]byte, error) { return os.ReadFile(p.CAFile) }

// newChain makes an ECDSA CA (ten years: a lab dir may live long) and a leaf for ips.
func newChain(ips []net.IP) (caPEM, certPEM, keyPEM []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	now := time.Now().Add(-time.Hour)
	ca := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "bootstrap lab CA", Organization: []string{"bootstrap e2e lab"}},
		NotBefore: now, NotAfter: now.AddDate(10, 0, 0), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	leaf := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "bootstrap lab services"},
		NotBefore: now, NotAfter: now.AddDate(10, 0, 0), IPAddresses: ips, DNSNames: []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62)) // crypto/rand never fails
	return n
}
