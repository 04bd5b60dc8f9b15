package profiles

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// expectedWarnings lists, per profile, the warnings that are intended (the path and a
// fragment of the message); any other warning or any error fails the test.
var expectedWarnings = map[string][]string{
	// Factory self-signed iDRAC certificates: verification off on purpose, said loudly.
	"compact-3node": {
		"nodes[0].bmc.insecure|TLS verification of this BMC is off",
		"nodes[1].bmc.insecure|TLS verification of this BMC is off",
		"nodes[2].bmc.insecure|TLS verification of this BMC is off",
	},
	"sno": {"nodes[0].bmc.insecure|TLS verification of this BMC is off"},
}

// TestProfilesValidate loads every embedded profile the way a field engineer would use it:
// written by init into an empty directory. First with missing files as warnings (the only
// warnings must be the missing files, and no errors); then with every referenced file created
// (secrets mode 0600), after which the profile must validate with no error at all.
func TestProfilesValidate(t *testing.T) {
	names := Names()
	if len(names) < 4 {
		t.Fatalf("want at least 4 profiles, got %v", names)
	}
	env := func(name string) (string, bool) { return "set-in-test", true }
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			data, err := Get(name)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "site.yaml")
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := site.Load(file)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			ps := s.Validate(site.MissingFilesAsWarnings(), site.WithLookupEnv(env))
			missing := 0
			for _, p := range ps {
				if p.Status == finding.Warn && strings.Contains(p.Message, "does not exist") {
					missing++
					continue
				}
				if !allowed(name, p) {
					t.Errorf("unexpected: %s", p)
				}
			}
			if missing == 0 {
				t.Errorf("expected the referenced files to be reported missing in an empty directory")
			}
			// Now create what the profile names and validate strictly.
			for _, lp := range s.LocalPaths() {
				if lp.Kind == "exec" && !filepath.IsAbs(lp.Path) {
					continue
				}
				if !strings.HasPrefix(lp.Path, dir) {
					t.Errorf("%s: %s is outside the profile directory; example profiles use relative paths", lp.Field, lp.Path)
					continue
				}
				create(t, lp)
			}
			if key := s.SSHPrivateKeyFile(); key != "" {
				create(t, site.LocalPath{Path: key, Kind: "secret"})
			}
			if f := s.Registry.AuthFile; f != "" { // validate reads its shape: an entry for registry.host
				auth := `{"auths":{"` + s.Registry.Host + `":{"auth":"Zml4dHVyZTpmaXh0dXJl"}}}`
				if err := os.WriteFile(f, []byte(auth), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range s.Validate(site.WithLookupEnv(env)) {
				if !allowed(name, p) {
					t.Errorf("unexpected with all files present: %s", p)
				}
			}
		})
	}
}

func allowed(profile string, p finding.Finding) bool {
	if p.Status != finding.Warn {
		return false
	}
	for _, w := range expectedWarnings[profile] {
		path, frag, _ := strings.Cut(w, "|")
		if p.Path == path && strings.Contains(p.Message, frag) {
			return true
		}
	}
	return false
}

func create(t *testing.T, lp site.LocalPath) {
	t.Helper()
	switch lp.Kind {
	case "dir":
		if err := os.MkdirAll(lp.Path, 0o755); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := os.MkdirAll(filepath.Dir(lp.Path), 0o755); err != nil {
		t.Fatal(err)
	}
	mode := os.FileMode(0o644)
	switch lp.Kind {
	case "secret":
		mode = 0o600
	case "exec":
		mode = 0o755
	}
	content := "fixture\n"
	switch {
	case lp.Kind == "secret":
		content = "fixture-secret\n" // secrets have at least 8 characters
	case strings.HasSuffix(lp.Path, ".pub"), strings.HasSuffix(lp.Path, ".pem"):
		content = realContent(t, lp.Path) // validate reads the key and CAs install-config carries
	}
	if err := os.WriteFile(lp.Path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(lp.Path, mode); err != nil { // umask may have widened nothing, but be exact
		t.Fatal(err)
	}
}

// realContent is an SSH public key for a .pub file, else a self-signed CA certificate, made at
// test time.
func realContent(t *testing.T, path string) string {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".pub") {
		k, err := ssh.NewPublicKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		return string(ssh.MarshalAuthorizedKey(k))
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "profiles test CA"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// TestCommentedOptionsValidate: the dell profile's commented proxy, capabilities and
// cpuPartitioningMode examples validate once uncommented.
func TestCommentedOptionsValidate(t *testing.T) {
	data, err := Get("dell-xe7740-h200")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "  # Optional, written into install-config")
	end := strings.Index(text[start:], "\n\n")
	if start < 0 || end < 0 {
		t.Fatal("the dell profile lost its commented options")
	}
	block := text[start : start+end]
	open := strings.ReplaceAll(strings.SplitN(block, "\n", 2)[1], "\n  # ", "\n  ")
	open = "  " + strings.TrimPrefix(open, "  # ")
	text = text[:start] + open + text[start+end:]
	dir := t.TempDir()
	file := filepath.Join(dir, "site.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := site.Load(file)
	if err != nil {
		t.Fatalf("uncommented:\n%s\n%v", open, err)
	}
	if !s.Cluster.Proxy.IsSet() || !s.Cluster.Capabilities.IsSet() || s.Cluster.CPUPartitioningMode != "AllNodes" {
		t.Fatalf("the options did not load:\n%s", open)
	}
	for _, lp := range s.LocalPaths() {
		if lp.Kind != "exec" {
			create(t, lp)
		}
	}
	create(t, site.LocalPath{Path: s.SSHPrivateKeyFile(), Kind: "secret"})
	auth := `{"auths":{"` + s.Registry.Host + `":{"auth":"Zml4dHVyZTpmaXh0dXJl"}}}`
	if err := os.WriteFile(s.Registry.AuthFile, []byte(auth), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(string) (string, bool) { return "set-in-test", true }
	for _, p := range s.Validate(site.WithLookupEnv(env)) {
		t.Errorf("%s", p)
	}
}
