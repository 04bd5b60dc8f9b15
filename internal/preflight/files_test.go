package preflight

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/binary"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

const canary = "CANARY-s3cr3t-0f-the-test"

func write(t *testing.T, dir, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func sshPub(t *testing.T) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var blob []byte
	for _, part := range [][]byte{[]byte("ssh-ed25519"), pub} {
		blob = binary.BigEndian.AppendUint32(blob, uint32(len(part)))
		blob = append(blob, part...)
	}
	return "ssh-ed25519 " + base64.StdEncoding.EncodeToString(blob) + " engineer@jump\n"
}

func certPEM(t *testing.T, cn string, notBefore, notAfter time.Time) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: notBefore, NotAfter: notAfter, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func authJSON(host string) string {
	return `{"auths": {"` + host + `": {"auth": "` + base64.StdEncoding.EncodeToString([]byte("admin:"+canary)) + `"}}}`
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	good := func() *site.Site {
		s := testSite()
		s.File = filepath.Join(dir, "site.yaml")
		s.Cluster.SSHKeyFile = "id.pub" // relative to the profile
		s.Registry = site.Registry{Host: "quay.lab:8443", AuthFile: write(t, dir, "auth.json", authJSON("quay.lab:8443"), 0o600),
			CAFile: write(t, dir, "ca.pem", certPEM(t, "lab CA", now.Add(-time.Hour), now.Add(365*24*time.Hour)), 0o644)}
		s.Mirror.ImageSetConfig = write(t, dir, "isc.yaml", "kind: ImageSetConfiguration\n", 0o644)
		s.Nodes = []site.Node{{Name: "m0", BMC: site.BMC{Password: site.SecretRef{File: write(t, dir, "bmc-pass", canary, 0o600)}}}}
		s.Day1.ExtraManifestsDir = dir
		return s
	}
	write(t, dir, "id.pub", sshPub(t), 0o644)

	got := runChecks(t, fileChecks(good(), Options{}.withDefaults()))
	for _, n := range []string{"file cluster.sshKeyFile", "file registry.authFile", "file registry.caFile",
		"file mirror.imageSetConfig", "file nodes[0].bmc.password.file", "file day1.extraManifestsDir"} {
		wantStatus(t, got, n, finding.Pass)
	}
	assertNoCanary(t, got)

	cases := []struct {
		name   string
		mutate func(s *site.Site)
		check  string
		want   finding.Status
		in     string // substring of message
	}{
		{"missing ssh key", func(s *site.Site) { s.Cluster.SSHKeyFile = filepath.Join(dir, "nope.pub") }, "file cluster.sshKeyFile", finding.Fail, "no such file"},
		{"private key given", func(s *site.Site) {
			s.Cluster.SSHKeyFile = write(t, dir, "id", "-----BEGIN OPENSSH PRIVATE KEY-----\n"+canary+"\n-----END OPENSSH PRIVATE KEY-----\n", 0o600)
		}, "file cluster.sshKeyFile", finding.Fail, "private key"},
		{"garbled ssh key", func(s *site.Site) {
			s.Cluster.SSHKeyFile = write(t, dir, "bad.pub", "ssh-ed25519 AAAAC3NzaC1yc2EAAAADAQAB x\n", 0o644)
		}, "file cluster.sshKeyFile", finding.Fail, "does not match its type"},
		{"auth not JSON", func(s *site.Site) {
			s.Registry.AuthFile = write(t, dir, "auth-bad.json", "{\n  \"auths\": {\n    \"x\": {\"auth\": \""+canary+"\",}\n}}", 0o600)
		}, "file registry.authFile", finding.Fail, "line 3, column"},
		{"auth wrong shape", func(s *site.Site) {
			s.Registry.AuthFile = write(t, dir, "auth-shape.json", `{"auths": ["`+canary+`"]}`, 0o600)
		}, "file registry.authFile", finding.Fail, "auths at line 1"},
		{"auth without the registry", func(s *site.Site) {
			s.Registry.AuthFile = write(t, dir, "auth-other.json", authJSON("other.example:5000"), 0o600)
		}, "file registry.authFile", finding.Warn, "no entry for quay.lab:8443"},
		{"auth entry malformed", func(s *site.Site) {
			s.Registry.AuthFile = write(t, dir, "auth-mal.json", `{"auths":{"quay.lab:8443":{"auth":"`+canary+`"}}}`, 0o600)
		}, "file registry.authFile", finding.Fail, "malformed"},
		{"CA not PEM", func(s *site.Site) { s.Registry.CAFile = write(t, dir, "ca-bad.pem", "hello\n", 0o644) }, "file registry.caFile", finding.Fail, "no PEM certificate"},
		{"CA expired", func(s *site.Site) {
			s.Registry.CAFile = write(t, dir, "ca-old.pem", certPEM(t, "old CA", now.Add(-48*time.Hour), now.Add(-24*time.Hour)), 0o644)
		}, "file registry.caFile", finding.Fail, "expired"},
		{"CA expiring", func(s *site.Site) {
			s.Registry.CAFile = write(t, dir, "ca-soon.pem", certPEM(t, "soon CA", now.Add(-time.Hour), now.Add(5*24*time.Hour)), 0o644)
		}, "file registry.caFile", finding.Warn, "expires"},
		{"empty secret file", func(s *site.Site) { s.Nodes[0].BMC.Password.File = write(t, dir, "empty", "", 0o600) }, "file nodes[0].bmc.password.file", finding.Fail, "empty"},
		{"manifests dir is a file", func(s *site.Site) { s.Day1.ExtraManifestsDir = filepath.Join(dir, "isc.yaml") }, "file day1.extraManifestsDir", finding.Fail, "not a directory"},
		{"secret env unset", func(s *site.Site) { s.Nodes[0].BMC.Password = site.SecretRef{Env: "PREFLIGHT_TEST_UNSET_VAR"} }, "env nodes[0].bmc.password.env", finding.Fail, "not set"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := good()
			tc.mutate(s)
			got := runChecks(t, fileChecks(s, Options{}.withDefaults()))
			r := wantStatus(t, got, tc.check, tc.want)
			if !strings.Contains(r.Message, tc.in) {
				t.Errorf("message %q does not contain %q", r.Message, tc.in)
			}
			assertNoCanary(t, got)
		})
	}
}

// A file several fields name is checked once.
func TestSharedFileCheckedOnce(t *testing.T) {
	dir := t.TempDir()
	pass := write(t, dir, "bmc-pass", canary, 0o600)
	s := testSite()
	for _, n := range []string{"m0", "m1", "m2"} {
		s.Nodes = append(s.Nodes, site.Node{Name: n, BMC: site.BMC{Password: site.SecretRef{File: pass}}})
	}
	got := runChecks(t, fileChecks(s, Options{}.withDefaults()))
	if len(got) != 1 {
		t.Fatalf("%d checks, want 1: %v", len(got), got)
	}
	wantStatus(t, got, "file nodes[0].bmc.password.file (+2 more)", finding.Pass)
}

func TestSecretEnvSet(t *testing.T) {
	t.Setenv("PREFLIGHT_TEST_BMC_PASS", canary)
	s := testSite()
	s.Nodes = []site.Node{{Name: "m0", BMC: site.BMC{Password: site.SecretRef{Env: "PREFLIGHT_TEST_BMC_PASS"}}}}
	got := runChecks(t, fileChecks(s, Options{}.withDefaults()))
	wantStatus(t, got, "env nodes[0].bmc.password.env", finding.Pass)
	assertNoCanary(t, got)
}

func assertNoCanary(t *testing.T, got map[string]CheckResult) {
	t.Helper()
	for n, r := range got {
		if strings.Contains(r.Message+r.Remedy, canary) || strings.Contains(r.Message, base64.StdEncoding.EncodeToString([]byte("admin:"+canary))) {
			t.Errorf("%s: a secret leaked into the result: %q", n, r.Message)
		}
	}
}
