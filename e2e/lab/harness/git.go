package harness

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// Git is the site's Git server: real `git http-backend` (smart HTTP) behind net/http/cgi, over
// TLS with the lab CA's certificate and HTTP basic auth, serving <lab>/git/repos. On first
// start it creates lab/cluster-config.git with a commit on main holding clusters/lab.
type Git struct {
	dir  string
	srv  *gitServer
	user string
	pass string
}

const (
	gitRepo        = "lab/cluster-config.git"
	gitUser        = "lab"
	gitPasswordRef = "secrets/git-password"
)

type gitServer struct {
	ln  net.Listener
	srv *http.Server
}

func (s *gitServer) Addr() string { return s.ln.Addr().String() }

// Name implements Component.
func (*Git) Name() string { return "git" }

// Start implements Component.
func (g *Git) Start(_ context.Context, l *Lab) error {
	g.dir = filepath.Join(l.Dir, "git", "repos")
	if err := g.seed(); err != nil {
		return fmt.Errorf("git repository: %w", err)
	}
	pwFile := filepath.Join(l.Dir, gitPasswordRef)
	if err := writeIfMissing(pwFile, []byte(randomSecret()), 0o600); err != nil {
		return err
	}
	pw, err := secretFile(pwFile)
	if err != nil {
		return err
	}
	g.user, g.pass = gitUser, pw
	cert, _, _, err := serverCert(l, "", 70)
	if err != nil {
		return err
	}
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		return fmt.Errorf("git --exec-path (install git): %w", err)
	}
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(out)), "git-http-backend"),
		Root: "/",
		Env:  []string{"GIT_PROJECT_ROOT=" + g.dir, "GIT_HTTP_EXPORT_ALL=1"},
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(g.user)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(g.pass)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="lab git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	})
	g.srv, err = startOnPort(l, "git", 70, func(addr string) (*gitServer, error) {
		ln, err := tls.Listen("tcp", addr, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
		if err != nil {
			return nil, err
		}
		s := &gitServer{ln: ln, srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
		go func() { _ = s.srv.Serve(ln) }()
		return s, nil
	})
	return err
}

// seed creates the bare repository with one commit on main, unless it exists.
func (g *Git) seed() error {
	bare := filepath.Join(g.dir, gitRepo)
	if _, err := os.Stat(filepath.Join(bare, "HEAD")); err == nil {
		return nil
	}
	work, err := os.MkdirTemp("", "lab-git-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	files := map[string]string{
		"clusters/lab/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- namespace.yaml\n",
		"clusters/lab/namespace.yaml":     "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: lab-apps\n",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Join(work, filepath.Dir(p)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(work, p), []byte(c), 0o644); err != nil {
			return err
		}
	}
	git := func(dir string, args ...string) error {
		cmd := exec.Command("git", append([]string{"-c", "user.name=lab", "-c", "user.email=lab@" + BaseDomain, "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(bare), 0o755); err != nil {
		return err
	}
	for _, step := range [][]string{{"init", "-q", "--bare", bare}} {
		if err := git(work, step...); err != nil {
			return err
		}
	}
	for _, step := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-q", "-m", "lab cluster config"},
		{"push", "-q", bare, "HEAD:refs/heads/main"}} {
		if err := git(work, step...); err != nil {
			return errors.Join(err, os.RemoveAll(bare))
		}
	}
	return nil
}

// Head is the commit rev (a branch, tag or commit; "" or HEAD for main) names in the repository.
func (g *Git) Head(rev string) (string, error) {
	if rev == "" || rev == "HEAD" {
		rev = "main"
	}
	out, err := exec.Command("git", "--git-dir", filepath.Join(g.dir, gitRepo), "rev-parse", "--verify", rev+"^{commit}").Output()
	if err != nil {
		return "", fmt.Errorf("unable to resolve %q to a commit SHA in %s", rev, gitRepo)
	}
	return strings.TrimSpace(string(out)), nil
}

// Configure implements Component.
func (g *Git) Configure(s *site.Site, _ *Lab) error {
	s.GitOps.RepoURL = "https://" + g.srv.Addr() + "/" + gitRepo
	s.GitOps.CAFile = CAFile
	s.GitOps.Credentials = site.GitCredentials{Username: gitUser, Password: site.SecretRef{File: gitPasswordRef}}
	return nil
}

// Stop implements Component.
func (g *Git) Stop(ctx context.Context) error {
	if g.srv == nil {
		return nil
	}
	err := g.srv.srv.Shutdown(ctx)
	g.srv = nil
	return err
}

// Describe implements Describer.
func (g *Git) Describe() string {
	return "git       https://" + g.srv.Addr() + "/" + gitRepo + " (git http-backend, TLS lab CA, basic auth " + gitUser + ")"
}
