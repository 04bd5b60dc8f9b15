package harness

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
)

// serverCert issues a certificate from the lab CA for lab hosts (last bytes of the lab /24) and
// 127.0.0.1. With dir set it also writes the chain and the key (0600) there, as cert.pem and
// key.pem, for servers configured by file (docker-registry).
func serverCert(l *Lab, dir string, hosts ...byte) (cert tls.Certificate, certFile, keyFile string, err error) {
	ips := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	for _, h := range hosts {
		ips = append(ips, l.IP(h))
	}
	if cert, err = l.CA.Issue(ips, "localhost"); err != nil {
		return cert, "", "", err
	}
	if dir == "" {
		return cert, "", "", nil
	}
	key, ok := cert.PrivateKey.(*ecdsa.PrivateKey)
	if !ok {
		return cert, "", "", fmt.Errorf("lab CA issued a %T key", cert.PrivateKey)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return cert, "", "", err
	}
	var chain []byte
	for _, der := range cert.Certificate {
		chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := writeFile(certFile, chain, 0o644); err != nil {
		return cert, "", "", err
	}
	if err := writeFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		return cert, "", "", err
	}
	return cert, certFile, keyFile, os.Chmod(dir, 0o700)
}
