package main

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/bootstrap-dev/bootstrap/profiles"
)

// writeLabSite writes the embedded lab profile into dir with every file it names, each secret
// holding canary, and returns the profile's path.
func writeLabSite(t *testing.T, dir, canary string) string {
	t.Helper()
	data, err := profiles.Get("lab")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "site.yaml")
	write(t, file, data, 0o644)

	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "lab CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "certs/lab-ca.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)

	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	sshPub, _ := ssh.NewPublicKey(pub)
	write(t, filepath.Join(dir, "ssh/id_ed25519.pub"), ssh.MarshalAuthorizedKey(sshPub), 0o644)
	blk, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "ssh/id_ed25519"), pem.EncodeToMemory(blk), 0o600)

	auth := base64.StdEncoding.EncodeToString([]byte("lab:" + canary))
	write(t, filepath.Join(dir, "secrets/registry-auth.json"),
		[]byte(`{"auths":{"127.0.0.1:5443":{"auth":"`+auth+`"}}}`), 0o600)
	write(t, filepath.Join(dir, "secrets/bmc-password"), []byte(canary+"\n"), 0o600)
	write(t, filepath.Join(dir, "secrets/git-token"), []byte(canary+"\n"), 0o600)
	write(t, filepath.Join(dir, "mirror/imageset-config.yaml"), []byte(`apiVersion: mirror.openshift.io/v2alpha1
kind: ImageSetConfiguration
mirror:
  additionalImages:
  - name: 127.0.0.1:5444/lab/tools:1.0
`), 0o644)
	return file
}

func write(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
}
