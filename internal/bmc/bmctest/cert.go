package bmctest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"time"
)

// Cert is a self-signed ECDSA certificate for 127.0.0.1 and ::1, standing in for an iDRAC's
// certificate signed by the site CA. Share one among many simulators so a single CA file trusts
// them all; ECDSA keeps 50 simulated TLS handshakes cheap on a small machine.
type Cert struct {
	TLS   tls.Certificate
	CAPEM []byte
}

// NewCert makes a certificate valid for a day, for 127.0.0.1, ::1, localhost and any extra IPs
// (the lab's per-node loopback addresses).
func NewCert(extra ...net.IP) (*Cert, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "idrac-sim", Organization: []string{"bootstrap bmctest"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           append([]net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, extra...),
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	return &Cert{
		TLS:   tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		CAPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
	}, nil
}
