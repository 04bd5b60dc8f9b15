package gitrepo_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/bootstrap-dev/bootstrap/internal/gather/sshtest"
	"github.com/bootstrap-dev/bootstrap/internal/gitrepo"
	"github.com/bootstrap-dev/bootstrap/internal/gitrepo/gitrepotest"
)

// emptyTmp points TMPDIR at a fresh directory and checks, at the end, that Prove left nothing
// there (the credentials, key and CA files are removed with their directory).
func emptyTmp(t *testing.T) string {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	return tmp
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	left, _ := os.ReadDir(dir)
	if len(left) > 0 {
		t.Errorf("Prove left %d entries in TMPDIR (%s...)", len(left), left[0].Name())
	}
}

func TestProveOverHTTPS(t *testing.T) {
	s := gitrepotest.Start(t)
	// A third commit on main: Commits[1] is no longer the tip of anything.
	third := s.Commit(t, "refs/heads/main", map[string]string{"clusters/prod/extra.yaml": "{}\n"})
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedURL := "https://" + closed.Addr().String() + gitrepotest.Repository
	_ = closed.Close()
	_, otherCA := gitrepotest.SelfSigned(t)

	good := gitrepo.Repo{URL: s.URL, Username: s.Username, Password: s.Password, CA: s.CA}
	with := func(f func(r *gitrepo.Repo)) gitrepo.Repo { r := good; f(&r); return r }
	tests := []struct {
		name       string
		repo       gitrepo.Repo
		wantCommit string
		wantRef    string
		wantStep   gitrepo.Step
		wantMsg    []string
	}{
		{name: "branch and path", repo: with(func(r *gitrepo.Repo) { r.Revision, r.Path = "main", "clusters/lab" }), wantCommit: third, wantRef: "refs/heads/main"},
		{name: "HEAD, path with slashes", repo: with(func(r *gitrepo.Repo) { r.Path = "/clusters/prod/" }), wantCommit: third, wantRef: "HEAD"},
		{name: "root path", repo: with(func(r *gitrepo.Repo) { r.Revision, r.Path = "release-1", "." }), wantCommit: s.Commits[0], wantRef: "refs/heads/release-1"},
		{name: "annotated tag", repo: with(func(r *gitrepo.Repo) { r.Revision, r.Path = "v1.0", "clusters/lab" }), wantCommit: s.Commits[0], wantRef: "refs/tags/v1.0"},
		{name: "full ref", repo: with(func(r *gitrepo.Repo) { r.Revision = "refs/heads/release-1" }), wantCommit: s.Commits[0], wantRef: "refs/heads/release-1"},
		{name: "commit no ref points at", repo: with(func(r *gitrepo.Repo) { r.Revision, r.Path = s.Commits[1], "clusters/prod" }), wantCommit: s.Commits[1]},
		{name: "abbreviated tip", repo: with(func(r *gitrepo.Repo) { r.Revision = third[:10] }), wantCommit: third, wantRef: "HEAD"},

		{name: "wrong branch", repo: with(func(r *gitrepo.Repo) { r.Revision = "release-9" }), wantStep: gitrepo.StepRevision,
			wantMsg: []string{`"release-9" is not a branch or tag`, "branches: main, release-1; tags: v1.0", "gitops.revision"}},
		{name: "unknown commit", repo: with(func(r *gitrepo.Repo) { r.Revision = strings.Repeat("12", 20) }), wantStep: gitrepo.StepRevision,
			wantMsg: []string{"commit 1212", "is not in", "gitops.revision"}},
		{name: "abbreviated commit no ref points at", repo: with(func(r *gitrepo.Repo) { r.Revision = s.Commits[1][:10] }), wantStep: gitrepo.StepRevision,
			wantMsg: []string{"full 40-character commit id"}},
		{name: "path missing", repo: with(func(r *gitrepo.Repo) { r.Revision, r.Path = "main", "clusters/labx" }), wantStep: gitrepo.StepPath,
			wantMsg: []string{`path "clusters/labx" does not exist at main`, "clusters/ holds: lab/, prod/", "gitops.path"}},
		{name: "path missing at the top", repo: with(func(r *gitrepo.Repo) { r.Path = "cluster/lab" }), wantStep: gitrepo.StepPath,
			wantMsg: []string{"the top level holds: README.md, clusters/"}},
		{name: "path only on another branch", repo: with(func(r *gitrepo.Repo) { r.Revision, r.Path = "release-1", "clusters/prod" }), wantStep: gitrepo.StepPath,
			wantMsg: []string{"at release-1", "clusters/ holds: lab/"}},
		{name: "path is a file", repo: with(func(r *gitrepo.Repo) { r.Path = "README.md" }), wantStep: gitrepo.StepPath,
			wantMsg: []string{"is a file, not a directory"}},
		{name: "wrong password", repo: with(func(r *gitrepo.Repo) { r.Password = "not-the-token" }), wantStep: gitrepo.StepRepository,
			wantMsg: []string{"refused the credentials", "gitops.credentials.password"}},
		{name: "no credentials", repo: with(func(r *gitrepo.Repo) { r.Username, r.Password = "", "" }), wantStep: gitrepo.StepRepository,
			wantMsg: []string{"asks for credentials", "gitops.credentials.username"}},
		{name: "system roots do not trust the server", repo: with(func(r *gitrepo.Repo) { r.CA = nil }), wantStep: gitrepo.StepRepository,
			wantMsg: []string{"is not trusted", "gitops.caFile"}},
		{name: "another CA", repo: with(func(r *gitrepo.Repo) { r.CA = otherCA }), wantStep: gitrepo.StepRepository,
			wantMsg: []string{"is not trusted", "gitops.caFile"}},
		{name: "wrong repository", repo: with(func(r *gitrepo.Repo) { r.URL = strings.TrimSuffix(s.URL, ".git") + "-old.git" }), wantStep: gitrepo.StepRepository,
			wantMsg: []string{"no repository at", "gitops.repoURL"}},
		{name: "nothing listening", repo: with(func(r *gitrepo.Repo) { r.URL = closedURL }), wantStep: gitrepo.StepRepository,
			wantMsg: []string{"cannot reach", "firewall"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := emptyTmp(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			p, err := gitrepo.Prove(ctx, tc.repo)
			assertEmpty(t, tmp)
			if tc.wantStep == "" {
				if err != nil {
					t.Fatalf("Prove: %v", err)
				}
				if p.Commit != tc.wantCommit || p.Ref != tc.wantRef {
					t.Errorf("proof %+v, want commit %s ref %q", p, tc.wantCommit, tc.wantRef)
				}
				return
			}
			var ge *gitrepo.Error
			if !errors.As(err, &ge) {
				t.Fatalf("Prove = %+v, %v; want a *gitrepo.Error at %s", p, err, tc.wantStep)
			}
			t.Logf("%v (%s)", ge, ge.Remedy())
			if ge.Step != tc.wantStep {
				t.Errorf("step %s, want %s: %v", ge.Step, tc.wantStep, err)
			}
			said := ge.Error() + " (" + ge.Remedy() + ")"
			for _, m := range tc.wantMsg {
				if !strings.Contains(said, m) {
					t.Errorf("error %q does not say %q", said, m)
				}
			}
			for _, secret := range []string{s.Password, "not-the-token"} {
				if strings.Contains(said, secret) {
					t.Errorf("error carries a password: %q", err)
				}
			}
		})
	}
}

// Over SSH the server's host key is verified against knownHostsFile: a changed key is refused.
func TestProveOverSSH(t *testing.T) {
	srv := gitrepotest.Start(t) // only for its bare repository
	s := sshtest.Start(t)
	key, err := os.ReadFile(s.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	kh := knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, s.HostKey) + "\n"
	repo := gitrepo.Repo{URL: "ssh://" + s.User + "@127.0.0.1:" + strconv.Itoa(s.Port) + srv.Bare,
		Revision: "main", Path: "clusters/prod", SSHKey: key, KnownHosts: []byte(kh)}
	tmp := emptyTmp(t)
	p, err := gitrepo.Prove(context.Background(), repo)
	if err != nil {
		t.Fatalf("Prove over SSH: %v", err)
	}
	if p.Commit != srv.Commits[1] {
		t.Errorf("commit %s, want %s", p.Commit, srv.Commits[1])
	}
	assertEmpty(t, tmp)

	none := repo
	none.KnownHosts = nil
	var ge *gitrepo.Error
	if _, err := gitrepo.Prove(context.Background(), none); !errors.As(err, &ge) || !strings.Contains(err.Error(), "not in gitops.credentials.knownHostsFile") {
		t.Errorf("an unknown host key must be refused: %v", err)
	}
	_, otherKey, _ := ed25519.GenerateKey(rand.Reader)
	blk, err := ssh.MarshalPrivateKey(otherKey, "not authorised")
	if err != nil {
		t.Fatal(err)
	}
	wrongKey := repo
	wrongKey.SSHKey = pem.EncodeToMemory(blk)
	if _, err := gitrepo.Prove(context.Background(), wrongKey); !errors.As(err, &ge) || !strings.Contains(err.Error(), "refused the SSH key") ||
		!strings.Contains(ge.Remedy(), "deploy key") {
		t.Errorf("a key the server does not know: %v", err)
	}
	wrongPath := repo
	wrongPath.Path = "clusters/edge"
	if _, err := gitrepo.Prove(context.Background(), wrongPath); !errors.As(err, &ge) || ge.Step != gitrepo.StepPath {
		t.Errorf("missing path over SSH: %v", err)
	}

	s.Restart(t) // new host key on the same port
	_, err = gitrepo.Prove(context.Background(), repo)
	if !errors.As(err, &ge) || ge.Step != gitrepo.StepRepository || !strings.Contains(err.Error(), "has changed") {
		t.Fatalf("a changed host key must be refused: %v", err)
	}
	assertEmpty(t, tmp)
}
