// Package gitrepotest serves a real Git repository for tests: git http-backend (smart HTTP,
// protocol v2) behind net/http/cgi, over TLS with a throwaway certificate and HTTP basic auth,
// the way the site's Git server (and the lab's) answers.
package gitrepotest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Repository is where the server serves the repository, under its URL.
const Repository = "/platform/cluster-config.git"

// Server is one Git server with one repository.
type Server struct {
	// URL is the repository's https:// URL.
	URL string
	// CA is the PEM certificate the server's TLS is verified with.
	CA []byte
	// Username and Password are the only credentials the server accepts.
	Username, Password string
	// Bare is the served bare repository.
	Bare string
	// Commits are the commits Start made, oldest first: the first holds clusters/lab and
	// README.md, the second adds clusters/prod; main points at the second, tag v1.0 (annotated)
	// at the first, branch release-1 at the first.
	Commits []string
	work    string
	srv     *httptest.Server
}

// Start seeds the repository and starts the server; it is stopped at the end of the test.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git not found: run scripts/install-deps.sh")
	}
	dir := t.TempDir()
	s := &Server{Username: "bootstrap", Password: "s3cret-t0ken:/@%", Bare: filepath.Join(dir, "root", Repository), work: filepath.Join(dir, "work")}
	s.git(t, dir, "init", "-q", "--bare", s.Bare)
	s.git(t, dir, "init", "-q", s.work)
	s.Commits = append(s.Commits, s.Commit(t, "refs/heads/main", map[string]string{
		"README.md":                       "cluster configuration\n",
		"clusters/lab/kustomization.yaml": "resources:\n- namespace.yaml\n",
		"clusters/lab/namespace.yaml":     "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: lab-apps\n",
	}))
	s.git(t, s.work, "tag", "-a", "-m", "first", "v1.0")
	s.git(t, s.work, "push", "-q", s.Bare, "refs/tags/v1.0", "HEAD:refs/heads/release-1")
	s.Commits = append(s.Commits, s.Commit(t, "refs/heads/main", map[string]string{
		"clusters/prod/kustomization.yaml": "resources: []\n",
	}))

	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{
		Path:   filepath.Join(strings.TrimSpace(string(out)), "git-http-backend"),
		Root:   "/",
		Stderr: io.Discard,
		Env:    []string{"GIT_PROJECT_ROOT=" + filepath.Join(dir, "root"), "GIT_HTTP_EXPORT_ALL=1"},
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(s.Username)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(s.Password)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	cert, caPEM := SelfSigned(t)
	s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL + Repository
	s.CA = caPEM
	return s
}

// SelfSigned makes a fresh self-signed certificate for 127.0.0.1 and localhost (so two servers
// never trust each other, unlike httptest's shared certificate) and returns it with its PEM.
func SelfSigned(t testing.TB) (tls.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "gitrepotest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// Commit writes files in the work tree, commits them and pushes the commit to ref; it returns
// the commit id.
func (s *Server) Commit(t testing.TB, ref string, files map[string]string) string {
	t.Helper()
	for p, c := range files {
		if err := os.MkdirAll(filepath.Join(s.work, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.work, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s.git(t, s.work, "add", ".")
	s.git(t, s.work, "commit", "-q", "-m", "update")
	s.git(t, s.work, "push", "-q", s.Bare, "HEAD:"+ref)
	out, err := exec.Command("git", "-C", s.work, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func (s *Server) git(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}
