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
// TLS with the lab CA's certificate and HTTP basic auth, serving <lab>/git/repos. On start it
// makes main of lab/cluster-config.git hold the lab site's repository (gitsite.go), committing
// only when that differs from what main holds (the Applications in it name the server's URL).
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
	if err != nil {
		return err
	}
	if _, err := g.Commit("lab site configuration", siteFiles(g.URL()), true); err != nil {
		return errors.Join(fmt.Errorf("git repository: %w", err), g.Stop(context.Background()))
	}
	return nil
}

// URL is the repository's https:// URL.
func (g *Git) URL() string { return "https://" + g.srv.Addr() + "/" + gitRepo }

// Commit makes main hold files (all of main's files when replace, else files over what main
// holds; an empty content removes a file) and returns main's commit: a new one when that changed
// anything, else the one it was. The bare repository is created on first use.
func (g *Git) Commit(msg string, files map[string]string, replace bool) (string, error) {
	bare := filepath.Join(g.dir, gitRepo)
	work, err := os.MkdirTemp("", "lab-git-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	git := func(args ...string) error {
		cmd := exec.Command("git", append([]string{"-c", "user.name=lab", "-c", "user.email=lab@" + BaseDomain, "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if _, err := os.Stat(filepath.Join(bare, "HEAD")); err != nil {
		if err := os.MkdirAll(filepath.Dir(bare), 0o755); err != nil {
			return "", err
		}
		if err := git("init", "-q", "--bare", bare); err != nil {
			return "", err
		}
	}
	if err := git("init", "-q"); err != nil {
		return "", err
	}
	if _, err := g.Head("main"); err == nil {
		if err := git("pull", "-q", bare, "main"); err != nil {
			return "", err
		}
		if replace {
			if err := git("rm", "-rqf", "--ignore-unmatch", "."); err != nil {
				return "", err
			}
		}
	}
	for p, c := range files {
		f := filepath.Join(work, filepath.FromSlash(p))
		if c == "" {
			if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
				return "", err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
			return "", err
		}
	}
	if err := git("add", "-A"); err != nil {
		return "", err
	}
	if err := git("diff", "--cached", "--quiet"); err == nil {
		return g.Head("main") // nothing changed
	}
	if err := git("commit", "-q", "-m", msg); err != nil {
		return "", err
	}
	if err := git("push", "-q", bare, "HEAD:refs/heads/main"); err != nil {
		return "", err
	}
	return g.Head("main")
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
	s.GitOps.RepoURL = g.URL()
	s.GitOps.Path = GitOpsPath
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
	return "git       " + g.URL() + " (git http-backend, TLS lab CA, basic auth " + gitUser + ")"
}
